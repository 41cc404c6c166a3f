@_spi(CofferInternals) import Coffer

/// A fast, deterministic `RandomSource` for harnesses: a counter stream. Never for real keys.
package final class CounterRandom: RandomSource, @unchecked Sendable {
    private var counter: UInt64

    package init(start: UInt64 = 0x436F_6666_6572) { counter = start }

    package func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        for i in 0..<buffer.count {
            counter &+= 0x9E37_79B9_7F4A_7C15
            buffer[i] = UInt8(truncatingIfNeeded: counter >> 29)
        }
    }

    package func uniform(_ upperBound: UInt32) -> UInt32 {
        guard upperBound >= 2 else { return 0 }
        counter &+= 0x9E37_79B9_7F4A_7C15
        return UInt32(truncatingIfNeeded: counter >> 17) % upperBound
    }
}
