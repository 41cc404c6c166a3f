import CSodium
import Foundation

/// Random passwords drawn uniformly from all passwords of a length that satisfy a rule set
/// (spec/policy.md §8): every character uniform and independent from the alphabet, the whole
/// password redrawn until every rule holds. Conditioning a uniform draw keeps it uniform, which
/// "one of each class, then shuffle" does not.
public struct PasswordGenerator: Sendable {
    package let rules: PasswordRules
    package let excludeLookalikes: Bool
    private let random: any RandomSource

    /// Length used when none is asked for, before clamping to the rules' bounds.
    package static let preferredLength = 20
    /// Characters easily mistaken for one another, removed with `excludeLookalikes`.
    package static let lookalikes = "0Oo1Il|5S2Z8B"
    /// Below this estimated acceptance probability a policy is refused as impractical (§8.4).
    package static let minimumAcceptance = 1e-4

    public init(rules: PasswordRules, excludeLookalikes: Bool = false) {
        self.init(rules: rules, excludeLookalikes: excludeLookalikes, random: SystemRandom())
    }

    public init(policy: PasswordPolicy, excludeLookalikes: Bool = false) {
        self.init(rules: policy.rules, excludeLookalikes: excludeLookalikes, random: SystemRandom())
    }

    /// A generator drawing from an injected random source (seeded tests).
    package init(rules: PasswordRules, excludeLookalikes: Bool = false, random: any RandomSource) {
        self.rules = rules
        self.excludeLookalikes = excludeLookalikes
        self.random = random
    }

    package init(policy: PasswordPolicy, excludeLookalikes: Bool = false, random: any RandomSource) {
        self.init(rules: policy.rules, excludeLookalikes: excludeLookalikes, random: random)
    }

    /// 20, raised to `minlength` and lowered to `maxlength`.
    public var defaultLength: Int {
        var length = max(Self.preferredLength, rules.minLength ?? 0)
        if let maxLength = rules.maxLength { length = min(length, maxLength) }
        return length
    }

    /// One password of `length` (default `defaultLength`) characters.
    /// - Throws: `policy.unsatisfiable` (with the reason) before drawing anything when no
    ///   password of that length satisfies the rules or too few do; `policy.invalid-option` for a
    ///   length above 65,535.
    public func generate(length: Int? = nil) throws -> String {
        try generate(count: 1, length: length)[0]
    }

    /// `count` passwords with one up-front plan (cheaper than `count` calls to `generate`).
    package func generate(count: Int, length: Int? = nil) throws -> [String] {
        let plan = try GenerationPlan(rules: rules, excludeLookalikes: excludeLookalikes, length: length ?? defaultLength)
        return try (0..<max(0, count)).map { _ in try plan.draw(random) }
    }

    /// The estimated probability that one uniform draw is accepted (§8.4), after the exact
    /// satisfiability checks; throws as `generate` would.
    package func acceptanceProbability(length: Int? = nil) throws -> Double {
        try GenerationPlan(rules: rules, excludeLookalikes: excludeLookalikes, length: length ?? defaultLength).acceptance
    }
}

/// Everything the draw loop needs, decided once: the alphabet, which required sets each
/// character hits, the satisfiability verdict and the attempt cap.
struct GenerationPlan {
    let length: Int
    /// The alphabet's ASCII codes; a draw picks an index into it.
    let alphabet: [UInt8]
    /// For each alphabet index: bit i set when the character is in simplified required set i.
    let signatures: [UInt32]
    let allRequired: UInt32
    let maxConsecutive: Int
    let acceptance: Double
    let maxAttempts: Int

    static let maximumRequiredSets = 16

    init(rules: PasswordRules, excludeLookalikes: Bool, length: Int) throws {
        guard length <= PasswordRules.maximumValue else {
            throw CofferError.invalidOption("a password length must be at most \(PasswordRules.maximumValue)")
        }
        guard length >= 1 else { throw CofferError.unsatisfiablePolicy("a password needs at least one character") }
        if let minLength = rules.minLength, length < minLength {
            throw CofferError.unsatisfiablePolicy("length \(length) is below the policy's minimum length \(minLength)")
        }
        if let maxLength = rules.maxLength, length > maxLength {
            throw CofferError.unsatisfiablePolicy("length \(length) is above the policy's maximum length \(maxLength)")
        }

        var alphabetSet = rules.allowed.intersection(.asciiPrintable)
        if excludeLookalikes {
            for scalar in PasswordGenerator.lookalikes.unicodeScalars { alphabetSet.remove(UInt8(scalar.value)) }
        }
        guard !alphabetSet.isEmpty else { throw CofferError.unsatisfiablePolicy("no character is allowed") }

        let required = try Self.simplify(rules.required.map { $0.intersection(alphabetSet) })
        let alphabet = alphabetSet.asciiCodes
        self.length = length
        self.alphabet = alphabet
        self.signatures = alphabet.map { code in
            required.enumerated().reduce(UInt32(0)) { mask, entry in
                entry.element.contains(ascii: code) ? mask | (1 << UInt32(entry.offset)) : mask
            }
        }
        self.allRequired = required.isEmpty ? 0 : UInt32((1 << required.count) - 1)
        self.maxConsecutive = rules.maxConsecutive ?? length

        let hitting = Self.minimumHittingSetSize(signatures: signatures, full: allRequired)
        guard hitting <= length else {
            throw CofferError.unsatisfiablePolicy("the required classes need at least \(hitting) characters but the length is \(length)")
        }
        guard maxConsecutive >= 1 else {
            throw CofferError.unsatisfiablePolicy("max-consecutive 0 forbids every character")
        }
        guard alphabet.count >= 2 || length <= maxConsecutive else {
            throw CofferError.unsatisfiablePolicy("only one character is allowed, so max-consecutive \(maxConsecutive) caps the length")
        }

        let pRequired = Self.requiredProbability(signatures: signatures, full: allRequired, length: length)
        let pRuns = Self.noLongRunProbability(alphabetSize: alphabet.count, length: length, maxRun: maxConsecutive)
        let acceptance = max(0, min(1, pRequired)) * pRuns
        guard acceptance >= PasswordGenerator.minimumAcceptance else {
            throw CofferError.unsatisfiablePolicy("only about \(acceptance) of random passwords of length \(length) satisfy the policy; relax it or change the length")
        }
        self.acceptance = acceptance
        self.maxAttempts = Int((50 / acceptance).rounded(.up)) + 10
    }

    /// Drops duplicate required sets and supersets of another (hitting the smaller one hits it);
    /// refuses an empty one (a class that is not allowed) and more than 16.
    static func simplify(_ sets: [PasswordCharacterSet]) throws -> [PasswordCharacterSet] {
        if sets.contains(where: \.isEmpty) {
            throw CofferError.unsatisfiablePolicy("a required class has no allowed character")
        }
        var unique: [PasswordCharacterSet] = []
        for set in sets where !unique.contains(set) { unique.append(set) }
        let minimal = unique.filter { set in !unique.contains { $0 != set && $0.isSubset(of: set) } }
        guard minimal.count <= maximumRequiredSets else {
            throw CofferError.unsatisfiablePolicy("more than \(maximumRequiredSets) distinct required classes")
        }
        return minimal
    }

    /// The fewest characters that together hit every required set (breadth-first over masks).
    static func minimumHittingSetSize(signatures: [UInt32], full: UInt32) -> Int {
        if full == 0 { return 0 }
        let distinct = Array(Set(signatures.filter { $0 != 0 }))
        var distance = [Int](repeating: -1, count: Int(full) + 1)
        distance[0] = 0
        var frontier: [UInt32] = [0]
        while !frontier.isEmpty {
            var next: [UInt32] = []
            for mask in frontier {
                for signature in distinct {
                    let reached = mask | signature
                    if distance[Int(reached)] < 0 {
                        distance[Int(reached)] = distance[Int(mask)] + 1
                        if reached == full { return distance[Int(reached)] }
                        next.append(reached)
                    }
                }
            }
            frontier = next
        }
        return Int.max
    }

    /// P(n uniform draws hit every required set), by inclusion–exclusion over the sets.
    static func requiredProbability(signatures: [UInt32], full: UInt32, length: Int) -> Double {
        if full == 0 { return 1 }
        let size = Double(signatures.count)
        var total = 0.0
        for subset in 0...full where subset & ~full == 0 {
            let missing = signatures.reduce(0) { $0 + ($1 & subset == 0 ? 1 : 0) }
            let term = pow(Double(missing) / size, Double(length))
            total += subset.nonzeroBitCount % 2 == 0 ? term : -term
        }
        return total
    }

    /// P(n uniform draws from `alphabetSize` characters contain no run longer than `maxRun`),
    /// exactly, by dynamic programming over the length of the current run.
    static func noLongRunProbability(alphabetSize: Int, length: Int, maxRun: Int) -> Double {
        if maxRun >= length { return 1 }
        if maxRun < 1 { return 0 }
        let same = 1 / Double(alphabetSize), different = 1 - same
        var runs = [Double](repeating: 0, count: maxRun + 1)  // runs[r]: P(alive, current run r)
        runs[1] = 1
        for _ in 1..<length {
            var next = [Double](repeating: 0, count: maxRun + 1)
            let alive = runs.reduce(0, +)
            next[1] = alive * different
            for run in 1..<maxRun { next[run + 1] = runs[run] * same }
            runs = next
        }
        return runs.reduce(0, +)
    }

    /// One accepted password, or `policy.unsatisfiable` after `maxAttempts` rejections.
    func draw(_ random: any RandomSource) throws -> String {
        var buffer = [UInt8](repeating: 0, count: length)
        defer { buffer.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        let alphabetSize = UInt32(alphabet.count)
        for _ in 0..<maxAttempts {
            var hits: UInt32 = 0
            var run = 0
            var previous = -1
            var accepted = true
            for position in 0..<length {
                let index = Int(random.uniform(alphabetSize))
                buffer[position] = alphabet[index]
                hits |= signatures[index]
                run = index == previous ? run + 1 : 1
                previous = index
                if run > maxConsecutive { accepted = false; break }
            }
            if accepted && hits == allRequired {
                return String(decoding: buffer, as: UTF8.self)
            }
        }
        throw CofferError.unsatisfiablePolicy("gave up after \(maxAttempts) attempts; the policy is too restrictive for this length")
    }
}
