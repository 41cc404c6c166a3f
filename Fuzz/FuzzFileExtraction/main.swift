// libFuzzer entry point for FuzzFileExtraction; the harness is FuzzTarget.fileExtraction in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzFileExtraction  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzFileExtraction)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.fileExtraction.libFuzzerEntry(data, size)
}
