#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func fflushAll() { fflush(nil) }
func _exitProcess(_ code: Int32) -> Never { exit(code) }
