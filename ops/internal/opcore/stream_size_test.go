//go:build !soak

package opcore_test

// streamThreadSteps is TestStreamThreadsClose's calls per goroutine in the
// ordinary suite; make soak builds with -tags soak for the full size.
const streamThreadSteps = 1000
