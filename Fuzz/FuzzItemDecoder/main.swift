// libFuzzer entry point for FuzzItemDecoder; the harness is FuzzTarget.itemDecoder in Fuzz/Support.
// Build: Fuzz/run.sh --build-only FuzzItemDecoder  (swift build -c release --sanitize=fuzzer --sanitize=address --product FuzzItemDecoder)
// In a normal build this executable does nothing.
import CofferFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.itemDecoder.libFuzzerEntry(data, size)
}
