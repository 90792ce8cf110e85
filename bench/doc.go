// Package bench holds vkflow's benchmarks against the raw C Vulkan baseline
// in bench/baseline: the Go side (bench_test.go, BenchmarkGo/<workload>)
// does exactly the work the C side (BenchmarkC/<workload>) does, so
// bench/report can pair them by name. bench/run.sh runs both, interleaved,
// unpinned and then (dispatch1024, empty_submit) pinned to one core with
// GOMAXPROCS=1, and prints the comparison; docs/BENCHMARKS.md explains the
// workloads and the results. The operator benchmarks (ops_test.go, BenchmarkOps) are
// paired the same way with baseline/ops.c and NumPy by bench/ops.sh and
// bench/opsreport.
//
// The package has no API; everything is in its tests.
package bench
