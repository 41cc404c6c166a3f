// libFuzzer entry point for FuzzPwnedPasswords; the harness is FuzzTarget.pwnedPasswords in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzPwnedPasswords  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzPwnedPasswords)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.pwnedPasswords.libFuzzerEntry(data, size)
}
