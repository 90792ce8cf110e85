package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// Three C runs and three Go runs, with go test's noise lines and a device
// line from the baseline's stderr mixed in.
const sampleInput = `baseline: device 0: llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan 1.3.230), driver llvmpipe Mesa 22.3.6
BenchmarkC/dispatch1024-2	5569	100000 ns/op
BenchmarkC/empty_submit-2	14420	30000 ns/op
BenchmarkC/mul16m_e2e-2	3	56000000 ns/op	3.60 GB/s
BenchmarkC/manager_create-2	44	5000000 ns/op
goos: linux
cpu: AMD EPYC
BenchmarkGo/dispatch1024-2         	   10000	    104000 ns/op
BenchmarkGo/allocs_submit_wait-2   	   10000	    107893 ns/op	         0 exact-allocs/op	       0 B/op	       0 allocs/op
BenchmarkGo/mul16m_e2e-2           	      22	  60000000 ns/op	3355.44 MB/s
PASS
BenchmarkC/dispatch1024-2	5569	90000 ns/op
BenchmarkC/mul16m_e2e-2	3	50331648 ns/op	4.00 GB/s
BenchmarkGo/dispatch1024-2	10000	200000 ns/op
BenchmarkGo/allocs_submit_wait-2	10000	1 ns/op	0 exact-allocs/op	0 B/op	0 allocs/op
BenchmarkGo/mul16m_e2e-2	22	50331648 ns/op	4000.00 MB/s
BenchmarkC/dispatch1024-2	5569	110000 ns/op
BenchmarkGo/dispatch1024-2	10000	90000 ns/op
BenchmarkGo/mul16m_e2e-2	22	70000000 ns/op	2876.09 MB/s
BenchmarkGo/extra-2	1	5 ns/op
`

func TestParseAndSummarize(t *testing.T) {
	res, err := parse(strings.NewReader(sampleInput))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.device, "llvmpipe (LLVM 15.0.6") || res.cpu != "AMD EPYC" {
		t.Fatalf("device %q, cpu %q", res.device, res.cpu)
	}
	r, ok := res.find("dispatch1024")
	if !ok || r.c.n != 3 || r.vf.n != 3 {
		t.Fatalf("dispatch1024: %+v", r)
	}
	if r.c.ns != 100000 || r.vf.ns != 104000 {
		t.Fatalf("medians: C %v, Go %v", r.c.ns, r.vf.ns)
	}
	if got := r.timeRatio(); math.Abs(got-1.04) > 1e-9 {
		t.Fatalf("ratio %v", got)
	}
	e, _ := res.find("mul16m_e2e")
	// C: two runs, median of 56e6 and 50331648 ns; 12*16Mi bytes per op.
	const bytesOp = 12 * 16 << 20
	if want := (56e6 + 50331648) / 2; e.c.ns != want {
		t.Fatalf("C e2e median %v, want %v", e.c.ns, want)
	}
	if want := bytesOp / e.c.ns; math.Abs(e.c.gbps-want)/want > 0.01 {
		t.Fatalf("C e2e GB/s %v, want %v", e.c.gbps, want)
	}
	if want := bytesOp / 60e6; math.Abs(e.vf.gbps-want)/want > 0.01 {
		t.Fatalf("Go e2e GB/s %v, want %v", e.vf.gbps, want)
	}
	if _, ok := res.find("allocs_submit_wait"); ok {
		t.Fatal("allocs_submit_wait must not be a table row")
	}
	rows := res.rows()
	if rows[len(rows)-1].name != "extra" || rows[0].name != "dispatch1024" {
		t.Fatalf("row order: %v", rows)
	}
}

func TestRender(t *testing.T) {
	res, err := parse(strings.NewReader(sampleInput))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	render(&buf, res, meta{date: "2026-11-21", arch: "x86_64", cpu: "CPU: AMD EPYC", device: "device: llvmpipe"})
	out := buf.String()
	for _, want := range []string{
		"2026-11-21 · x86_64 · CPU: AMD EPYC · device: llvmpipe",
		"| dispatch1024 | 100,000 | 104,000 | 1.04 | — | — | — |",
		"| empty_submit | 30,000 | — | — |",
		"| manager_create | 5,000,000 | — | — |",
		"dispatch1024 vkflow/C time <= 1.05: 1.04",
		"— **MET**",
		"allocs per submit+wait == 0: 0 — **MET**",
		"mul16m_e2e vkflow GB/s >= 0.9x C (vec4 e2e): 3.36 vs 3.79 GB/s = 0.89x — **NOT MET**",
		"vkflow e2e GB/s / 2.21 = 1.52",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "| workload |") != 1 {
		t.Errorf("want exactly one table:\n%s", out)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"BenchmarkC/x-2\t10\tabc ns/op\n",
		"BenchmarkC/x-2\t10\t100 ns/op\t5\n",
		"BenchmarkGo/x-2\t10\t5 MB/s\n",
	} {
		if _, err := parse(strings.NewReader(in)); err == nil {
			t.Errorf("parse(%q) succeeded", in)
		}
	}
}

func TestGroup(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 56718658: "56,718,658", 123456.6: "123,457"} {
		if got := group(v); got != want {
			t.Errorf("group(%v) = %q, want %q", v, got, want)
		}
	}
}
