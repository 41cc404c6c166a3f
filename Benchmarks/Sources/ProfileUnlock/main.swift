import CofferTestSupport
@_spi(CofferInternals) import Coffer
import Foundation

// A plain driver for profilers (valgrind cannot run the benchmark harness itself):
//   profile-unlock ITEMS [open|list|add] [REPEAT]   (add: 50 × add+delete on one open vault)
// builds a vault of ITEMS items with the cheapest KDF in a temp dir, then repeats the operation.
// It links Coffer only (not the benchmark library, whose malloc interposer would be measured too).
//   valgrind --tool=callgrind --toggle-collect='$s6Coffer5VaultC4open*' profile-unlock 10000 open
let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1])! : 10_000
let operation = arguments.count > 2 ? arguments[2] : "open"
let repeats = arguments.count > 3 ? Int(arguments[3])! : 3

let password = try SecureBytes(utf8: "correct horse battery staple")
let path = FileManager.default.temporaryDirectory.path + "/coffer-profile-\(getpid()).coffer"
func item(_ n: Int) -> Item {
    Item(title: "service-\(n).example", username: "user\(n)@example.com",
         password: try! Secret(String(repeating: "x", count: 20)), urls: ["https://site\(n).example/login"],
         notes: n % 3 == 0 ? String(repeating: "note ", count: 20) : nil, tags: n % 2 == 0 ? ["work"] : [])
}
do {
    let vault = try Vault.create(at: path, password: password, kdf: .minimal)
    for start in stride(from: 0, to: count, by: 2_000) {
        try vault.addAll((start..<min(count, start + 2_000)).map(item))
    }
    vault.close()
}
let clock = ContinuousClock()
for round in 0..<repeats {
    let start = clock.now
    switch operation {
    case "list":
        let vault = try Vault.open(at: path, password: password, mode: .readOnly)
        let listed = try vault.list()
        precondition(listed.count == count)
        vault.close()
    case "add":  // add one item then delete it, 50 times on one open vault; prints each step's median
        let vault = try Vault.open(at: path, password: password)
        // Interleaved with the reference (512 B append + fdatasync on a side file in the same
        // directory), so both see the same disk conditions: fsync latency here varies 50x with load.
        let side = open(path + ".fsync", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        var adds: [Duration] = [], deletes: [Duration] = [], syncs: [Duration] = []
        let block = [UInt8](repeating: 0x5A, count: 512)
        for i in 0..<50 {
            let new = item(count + round * 1_000 + i)
            let t0 = clock.now
            try vault.add(new)
            let t1 = clock.now
            try vault.delete(new.id)
            let t2 = clock.now
            precondition(block.withUnsafeBytes { write(side, $0.baseAddress, 512) } == 512 && fdatasync(side) == 0)
            adds.append(t1 - t0)
            deletes.append(t2 - t1)
            syncs.append(clock.now - t2)
        }
        close(side)
        unlink(path + ".fsync")
        print("  medians: add \(adds.sorted()[25]), delete \(deletes.sorted()[25]), 512 B append + fdatasync \(syncs.sorted()[25])")
        vault.close()
    default:
        let vault = try Vault.open(at: path, password: password)
        let opened = try vault.count
        precondition(opened == count)
        vault.close()
    }
    print("\(operation) \(count) items: \(clock.now - start)")
}
try? FileManager.default.removeItem(atPath: path)
try? FileManager.default.removeItem(atPath: path + ".lock")
