// libFuzzer entry point for FuzzImportKeePassXML; the harness is FuzzTarget.importKeePassXML in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzImportKeePassXML  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzImportKeePassXML)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.importKeePassXML.libFuzzerEntry(data, size)
}
