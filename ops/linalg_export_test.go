package ops

// SetJacobiHooks sets the Jacobi kernel's test hooks (see jacobiHooks)
// and returns a function that restores them.
func SetJacobiHooks(pairsPerGroup int, mutate bool) func() {
	old := jacobiHooks
	jacobiHooks.pairsPerGroup, jacobiHooks.mutate = pairsPerGroup, mutate
	return func() { jacobiHooks = old }
}
