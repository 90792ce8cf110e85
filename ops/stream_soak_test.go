//go:build soak

package ops_test

// streamThreadSteps is TestStreamThreadsClose's full size (make soak).
const streamThreadSteps = 10000
