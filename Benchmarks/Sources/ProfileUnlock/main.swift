import Coffer
import Foundation

// A plain driver for profilers (valgrind cannot run the benchmark harness itself):
//   profile-unlock ITEMS [open|list|add] [REPEAT]
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
    case "add":
        let vault = try Vault.open(at: path, password: password)
        try vault.add(item(count + round))
        vault.close()
    default:
        let vault = try Vault.open(at: path, password: password)
        precondition(vault.count == count)
        vault.close()
    }
    print("\(operation) \(count) items: \(clock.now - start)")
}
try? FileManager.default.removeItem(atPath: path)
try? FileManager.default.removeItem(atPath: path + ".lock")
