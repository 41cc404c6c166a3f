// libFuzzer entry point for FuzzThrottleState; the harness is FuzzTarget.throttleState in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzThrottleState  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzThrottleState)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.throttleState.libFuzzerEntry(data, size)
}
