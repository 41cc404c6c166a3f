// libFuzzer entry point for FuzzPasswordRules; the harness is FuzzTarget.passwordRules in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzPasswordRules  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzPasswordRules)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.passwordRules.libFuzzerEntry(data, size)
}
