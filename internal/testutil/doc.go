// Package testutil opens Managers for tests: validation and synchronization
// validation on, and every validation message of warning or error severity
// fails the test that caused it, including the layer's report of objects
// leaked at device destruction (during Close, in the test's cleanup).
//
// It imports vkflow; only _test packages import it.
package testutil
