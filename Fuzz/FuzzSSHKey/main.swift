// libFuzzer entry point for FuzzSSHKey; the harness is FuzzTarget.sshKey in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzSSHKey  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzSSHKey)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.sshKey.libFuzzerEntry(data, size)
}
