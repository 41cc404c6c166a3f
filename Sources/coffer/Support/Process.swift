import CofferSystem

func fflushAll() { fflush(nil) }
func _exitProcess(_ code: Int32) -> Never { exit(code) }
