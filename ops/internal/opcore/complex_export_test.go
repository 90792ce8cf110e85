package opcore

// SetComplexMathFn puts name -> fn into complexMathFns for a test and
// returns the function that restores the table.
func SetComplexMathFn(name, fn string) (restore func()) {
	old, had := complexMathFns[name]
	complexMathFns[name] = fn
	return func() {
		if had {
			complexMathFns[name] = old
		} else {
			delete(complexMathFns, name)
		}
	}
}

// ComplexMathFn returns complexMathFns[name].
func ComplexMathFn(name string) string { return complexMathFns[name] }
