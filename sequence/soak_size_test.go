//go:build soak

package sequence_test

// soakSubmits is the full soak's size (make soak).
const soakSubmits = 100000
