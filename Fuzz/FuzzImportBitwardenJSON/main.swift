// libFuzzer entry point for FuzzImportBitwardenJSON; the harness is FuzzTarget.importBitwardenJSON in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzImportBitwardenJSON  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzImportBitwardenJSON)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.importBitwardenJSON.libFuzzerEntry(data, size)
}
