//go:build !soak

package sequence_test

// soakSubmits is the soak's size in the ordinary suite: a few seconds.
// make soak builds with -tags soak for the full size.
const soakSubmits = 2000
