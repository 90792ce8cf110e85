package ops

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
