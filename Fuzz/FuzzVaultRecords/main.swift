// libFuzzer entry point for FuzzVaultRecords; the harness is FuzzTarget.vaultRecords in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzVaultRecords  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzVaultRecords)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.vaultRecords.libFuzzerEntry(data, size)
}
