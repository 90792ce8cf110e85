//go:build soak

package opcore_test

// streamThreadSteps is TestStreamThreadsClose's full size (make soak).
const streamThreadSteps = 10000
