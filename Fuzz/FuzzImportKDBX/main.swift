// libFuzzer entry point for FuzzImportKDBX; the harness is FuzzTarget.importKDBX in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzImportKDBX  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzImportKDBX)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.importKDBX.libFuzzerEntry(data, size)
}
