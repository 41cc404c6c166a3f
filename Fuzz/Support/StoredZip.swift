/// A minimal zip writer: entries stored uncompressed (method 0) with their CRC-32. The
/// FuzzImport1Password harness wraps fuzzed `export.data` bytes in one, so the fuzzer reaches the
/// 1PUX mapping past the archive's checksums; tests build small 1PUX files with it.
package enum StoredZip {
    package static func archive(_ files: [(name: String, data: [UInt8])]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var out: [UInt8] = [], central: [UInt8] = []
        for (name, data) in files {
            let nameBytes = Array(name.utf8), crc = crc32(data), size = UInt32(truncatingIfNeeded: data.count)
            let offset = UInt32(truncatingIfNeeded: out.count)
            // version 2.0, no flags, stored, DOS time 0 / date 1980-01-01
            let common = le16(20) + le16(0) + le16(0) + le16(0) + le16(0x21) + le32(crc) + le32(size) + le32(size)
                + le16(nameBytes.count) + le16(0)
            out += [0x50, 0x4B, 0x03, 0x04] + common + nameBytes + data
            central += [0x50, 0x4B, 0x01, 0x02] + le16(20) + common + le16(0) + le16(0) + le16(0) + le32(0) + le32(offset) + nameBytes
        }
        let centralOffset = UInt32(truncatingIfNeeded: out.count)
        out += central
        out += [0x50, 0x4B, 0x05, 0x06] + le16(0) + le16(0) + le16(files.count) + le16(files.count)
            + le32(UInt32(truncatingIfNeeded: central.count)) + le32(centralOffset) + le16(0)
        return out
    }

    /// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as zip uses it.
    package static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
