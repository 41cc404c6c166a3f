// libFuzzer entry point for FuzzVaultReader; the harness is FuzzTarget.vaultReader in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzVaultReader  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzVaultReader)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.vaultReader.libFuzzerEntry(data, size)
}
