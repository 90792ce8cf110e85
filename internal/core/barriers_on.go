//go:build !vkflow_nobarriers

package core

// InferBarriers is true in every real build. The vkflow_nobarriers build
// tag (barriers_off.go) turns it off to prove the tests can see a missing
// barrier: make test-oracle runs the suite that way and must see
// SYNC-HAZARD reports.
const InferBarriers = true
