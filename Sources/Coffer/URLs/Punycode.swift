/// Punycode (RFC 3492), the encoding of an internationalised host label's Unicode form in
/// ASCII (`bücher` ⇄ `bcher-kva`). Written here, not taken from Foundation: on Linux (Swift 6.3)
/// `URL(string:)` encodes a Unicode host but `URLComponents` keeps it as Unicode, neither
/// decodes or validates an `xn--` label, and Apple platforms' URL parsing differs by release.
/// Every step is checked for overflow and both directions refuse rather than guess, so invalid
/// input (a fuzzer's, an attacker's) yields nil, never a trap or a different label.
package enum Punycode {
    private static let base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700
    private static let initialBias = 72, initialN = 128
    /// Larger inputs are refused: a host label is at most 63 bytes, so no real label comes near.
    package static let maximumInput = 1_024
    private static let limit = Int(UInt32.max)

    /// RFC 3492 §6.1.
    private static func adapt(_ delta: Int, _ points: Int, _ first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + (base - tMin + 1) * delta / (delta + skew)
    }

    private static func threshold(_ k: Int, _ bias: Int) -> Int {
        k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
    }

    private static func digit(_ value: Int) -> UInt8 {
        UInt8(value < 26 ? 97 + value : 22 + value)  // a–z, then 0–9
    }

    private static func value(of byte: UInt8) -> Int? {
        switch byte {
        case 48...57: return Int(byte) - 22
        case 65...90: return Int(byte) - 65
        case 97...122: return Int(byte) - 97
        default: return nil
        }
    }

    /// The ASCII encoding of `scalars` (without the `xn--` prefix); nil if it would overflow.
    package static func encode(_ scalars: [Unicode.Scalar]) -> String? {
        guard scalars.count <= maximumInput else { return nil }
        let input = scalars.map { Int($0.value) }
        var output: [UInt8] = input.filter { $0 < 0x80 }.map { UInt8($0) }
        let basic = output.count
        var handled = basic
        if basic > 0 { output.append(45) }  // "-"
        var n = initialN, delta = 0, bias = initialBias
        while handled < input.count {
            guard let m = input.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta + step <= limit else { return nil }
            delta += step
            n = m
            for c in input {
                if c < n {
                    delta += 1
                    guard delta <= limit else { return nil }
                }
                if c == n {
                    var q = delta, k = base
                    while true {
                        let t = threshold(k, bias)
                        if q < t { break }
                        output.append(digit(t + (q - t) % (base - t)))
                        q = (q - t) / (base - t)
                        k += base
                    }
                    output.append(digit(q))
                    bias = adapt(delta, handled + 1, handled == basic)
                    delta = 0
                    handled += 1
                }
            }
            delta += 1
            n += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The Unicode scalars `text` encodes; nil for anything RFC 3492 does not allow (a non-basic
    /// byte before the last `-`, a bad digit, a truncated number, overflow, a surrogate or a
    /// value past U+10FFFF).
    package static func decode(_ text: some Collection<UInt8>) -> [Unicode.Scalar]? {
        let input = Array(text)
        guard input.count <= maximumInput, input.allSatisfy({ $0 < 0x80 }) else { return nil }
        var output: [UInt32] = []
        var position = 0
        if let dash = input.lastIndex(of: 45) {
            output = input[..<dash].map { UInt32($0) }
            position = dash + 1
        }
        var n = initialN, i = 0, bias = initialBias
        while position < input.count {
            let old = i
            var w = 1, k = base
            while true {
                guard position < input.count, let d = value(of: input[position]) else { return nil }
                position += 1
                let (product, overflow) = d.multipliedReportingOverflow(by: w)
                guard !overflow, i + product <= limit else { return nil }
                i += product
                let t = threshold(k, bias)
                if d < t { break }
                let (next, overflowW) = w.multipliedReportingOverflow(by: base - t)
                guard !overflowW, next <= limit else { return nil }
                w = next
                k += base
            }
            let count = output.count + 1
            bias = adapt(i - old, count, old == 0)
            n += i / count
            guard n <= limit else { return nil }
            i %= count
            guard n <= 0x10FFFF, !(0xD800...0xDFFF).contains(n) else { return nil }
            output.insert(UInt32(n), at: i)
            i += 1
        }
        return output.map { Unicode.Scalar($0)! }
    }
}
