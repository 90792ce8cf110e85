package linalg

// SetLinBudget sets the linalg kernels' loop budget (small: steps split
// into several dispatches) and returns the function that restores it.
func SetLinBudget(n int) func() {
	old := linBudget
	linBudget = n
	return func() { linBudget = old }
}

// SetVecdotChunk sets vecdot's elements per dispatch and returns the
// function that restores it.
func SetVecdotChunk(n int) func() {
	old := vecdotChunk
	vecdotChunk = n
	return func() { vecdotChunk = old }
}

// SetJacobiHooks sets the Jacobi kernel's test hooks (see jacobiHooks)
// and returns a function that restores them.
func SetJacobiHooks(pairsPerGroup int, mutate bool) func() {
	old := jacobiHooks
	jacobiHooks.pairsPerGroup, jacobiHooks.mutate = pairsPerGroup, mutate
	return func() { jacobiHooks = old }
}

// SetEigHooks sets the QR kernel's loop budget (small: a sweep spans
// several dispatches) and its mutation (the Z update's rotation with the
// wrong sign), and returns the function that restores them.
func SetEigHooks(budget int, mutate bool) func() {
	oldB, oldM := eigBudget, eigMutate
	if budget > 0 {
		eigBudget = budget
	}
	eigMutate = mutate
	return func() { eigBudget, eigMutate = oldB, oldM }
}

// SetEigBalance turns eig's balancing on or off and returns the function
// that restores it.
func SetEigBalance(on bool) func() {
	old := eigBalanceOn
	eigBalanceOn = on
	return func() { eigBalanceOn = old }
}
