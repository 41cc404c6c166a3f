// libFuzzer entry point for FuzzPasskeyOptions; the harness is FuzzTarget.passkeyOptions in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzPasskeyOptions  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzPasskeyOptions)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.passkeyOptions.libFuzzerEntry(data, size)
}
