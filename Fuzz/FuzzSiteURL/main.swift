// libFuzzer entry point for FuzzSiteURL; the harness is FuzzTarget.siteURL in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzSiteURL  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzSiteURL)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.siteURL.libFuzzerEntry(data, size)
}
