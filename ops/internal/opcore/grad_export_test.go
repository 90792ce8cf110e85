package opcore

// SwapVJP replaces the VJP rule of the op name with the one of the op
// from (a wrong rule, for the mutation check) and returns the function
// that restores it.
func SwapVJP(name, from string) func() {
	registry.Lock()
	defer registry.Unlock()
	old := grads[name]
	grads[name] = grads[from]
	return func() {
		registry.Lock()
		defer registry.Unlock()
		grads[name] = old
	}
}

// SetGradPoolIgnoresLiveness makes Tape.Grad pool every buffer its
// backward ops produced at each step, live or not (the mutation check of
// the buffer reuse), and returns the function that restores it.
func SetGradPoolIgnoresLiveness(v bool) func() {
	old := gradPoolIgnoresLiveness
	gradPoolIgnoresLiveness = v
	return func() { gradPoolIgnoresLiveness = old }
}

// SetGradPoolOff turns Tape.Grad's buffer reuse off (the benchmark's
// baseline) and returns the function that restores it.
func SetGradPoolOff(v bool) func() {
	old := gradPoolOff
	gradPoolOff = v
	return func() { gradPoolOff = old }
}
