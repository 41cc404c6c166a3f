// libFuzzer entry point for FuzzImportCSV; the harness is FuzzTarget.importCSV in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzImportCSV  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzImportCSV)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.importCSV.libFuzzerEntry(data, size)
}
