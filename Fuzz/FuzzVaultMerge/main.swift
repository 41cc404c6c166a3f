// libFuzzer entry point for FuzzVaultMerge; the harness is FuzzTarget.vaultMerge in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzVaultMerge  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzVaultMerge)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.vaultMerge.libFuzzerEntry(data, size)
}
