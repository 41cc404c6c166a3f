// libFuzzer entry point for FuzzTOTPURI; the harness is FuzzTarget.totpURI in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzTOTPURI  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzTOTPURI)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.totpURI.libFuzzerEntry(data, size)
}
