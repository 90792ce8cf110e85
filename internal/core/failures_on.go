//go:build !vkflow_nofailures

package core

// PropagateFailures is false only under the test-only vkflow_nofailures
// build tag (failures_off.go).
const PropagateFailures = true
