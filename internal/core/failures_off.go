//go:build vkflow_nofailures

package core

// PropagateFailures is false only under the test-only vkflow_nofailures
// build tag: failed producers then mark nothing, as before failures
// travelled along timelines, and the failure tests must fail (make
// test-oracle). Never ship a build with this tag.
const PropagateFailures = false
