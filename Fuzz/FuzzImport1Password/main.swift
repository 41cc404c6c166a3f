// libFuzzer entry point for FuzzImport1Password; the harness is FuzzTarget.import1Password in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzImport1Password  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzImport1Password)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.import1Password.libFuzzerEntry(data, size)
}
