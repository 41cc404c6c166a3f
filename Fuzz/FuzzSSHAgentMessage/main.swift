// libFuzzer entry point for FuzzSSHAgentMessage; the harness is FuzzTarget.sshAgentMessage in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzSSHAgentMessage  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzSSHAgentMessage)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.sshAgentMessage.libFuzzerEntry(data, size)
}
