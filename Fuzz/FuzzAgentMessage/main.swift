// libFuzzer entry point for FuzzAgentMessage; the harness is FuzzTarget.agentMessage in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzAgentMessage  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzAgentMessage)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.agentMessage.libFuzzerEntry(data, size)
}
