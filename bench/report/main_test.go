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
	out := rendered(t, res, meta{date: "2026-11-21", arch: "x86_64", cpu: "CPU: AMD EPYC", device: "device: llvmpipe"},
		"2026-11-21 · x86_64 · CPU: AMD EPYC · device: llvmpipe",
		"| dispatch1024 | 100,000 | 104,000 | 1.04 | — | — | — |",
		"| empty_submit | 30,000 | — | — |",
		"| manager_create | 5,000,000 | — | — |",
		"dispatch1024 vkflow/C time <= 1.05: 1.04",
		"— **MET**",
		"allocs per submit+wait == 0: 0 allocs/op (worst exact average 0.0000) — **MET**",
		"mul16m_e2e vkflow GB/s >= 0.9x C (vec4 e2e): 3.36 vs 3.79 GB/s = 0.89x — **NOT MET**",
		"chain: vkflow timeline chain >= 3x throughput of host-Eval chain: **NOT MEASURED**",
		"chain: vkflow <= 1.15x C (ns/dispatch): **NOT MEASURED**",
	)
	// A peer's figure belongs in a side-by-side run, not in the report.
	if strings.Contains(out, "Kompute") {
		t.Errorf("the report prints a peer's figure:\n%s", out)
	}
	if strings.Count(out, "| workload |") != 1 {
		t.Errorf("want exactly one table (no chains or queue pairs in the input):\n%s", out)
	}
	// One allocation in a few thousand iterations rounds down to 0 allocs/op
	// but misses the goal.
	res, err = parse(strings.NewReader(strings.Replace(sampleInput, "1 ns/op\t0 exact-allocs/op", "1 ns/op\t0.0004 exact-allocs/op", 1)))
	if err != nil {
		t.Fatal(err)
	}
	rendered(t, res, meta{}, "allocs per submit+wait == 0: 0 allocs/op (worst exact average 0.0004) — **NOT MET**")
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

// Chains report ns/op per chain and ns/dispatch; C has no eval chain.
const chainInput = `BenchmarkC/chain1000-2	3	60000000 ns/op	60000 ns/dispatch
BenchmarkGo/chain1000-2            	       3	  66000000 ns/op	     66000 ns/dispatch
BenchmarkGo/chain1000_eval-2       	       2	 165000000 ns/op	    165000 ns/dispatch
BenchmarkC/chain1000-2	3	50000000 ns/op	50000 ns/dispatch
BenchmarkGo/chain1000-2	3	54000000 ns/op	54000 ns/dispatch
BenchmarkGo/chain1000_eval-2	2	175000000 ns/op	175000 ns/dispatch
BenchmarkGo/chain1000_eval-2	2	170000000 ns/op	170000 ns/dispatch
`

func TestChains(t *testing.T) {
	res, err := parse(strings.NewReader(sampleInput + chainInput))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := res.find("chain1000")
	if !ok || !c.chain() || c.c.n != 2 || c.vf.n != 2 {
		t.Fatalf("chain1000: %+v", c)
	}
	// Medians of two: C 55000, Go 60000 ns/dispatch.
	if c.c.perDispatch != 55000 || c.vf.perDispatch != 60000 || c.vf.minPD != 54000 || c.vf.maxPD != 66000 {
		t.Fatalf("chain1000 per dispatch: C %v, Go %v (%v–%v)", c.c.perDispatch, c.vf.perDispatch, c.vf.minPD, c.vf.maxPD)
	}
	if got, want := c.dispatchRatio(), 60000.0/55000; math.Abs(got-want) > 1e-12 {
		t.Fatalf("dispatch ratio %v, want %v", got, want)
	}
	e, _ := res.find("chain1000_eval")
	if !e.chain() || e.hasC || e.vf.perDispatch != 170000 {
		t.Fatalf("chain1000_eval: %+v", e)
	}
	if d, _ := res.find("dispatch1024"); d.chain() {
		t.Fatal("dispatch1024 is not a chain")
	}

	out := rendered(t, res, meta{date: "2026-11-22", arch: "x86_64", cpu: "CPU: AMD EPYC", device: "device: llvmpipe"},
		"| chain1000 | 55,000 | 60,000 | 1.09 | 16,667 | 2.83x |",
		"| chain1000_eval | — | 170,000 | — | 5,882 | 1.00x |",
		"- chain1000: C 50,000–60,000 ns/dispatch (2 runs); vkflow 54,000–66,000 ns/dispatch (2 runs)",
		"chain: vkflow timeline chain >= 3x throughput of host-Eval chain: 2.83x (60,000 vs 170,000 ns/dispatch) — **NOT MET**",
		"chain: vkflow <= 1.15x C (ns/dispatch): 1.09 (60,000 vs 55,000 ns/dispatch) — **MET**",
		"| dispatch1024 | 100,000 | 104,000 | 1.04 | — | — | — |",
	)
	// The chains are not rows of the ns/op table.
	if strings.Contains(out, "| chain1000 | 55,000,000") || strings.Contains(out, "| chain1000 | 60,000,000") {
		t.Errorf("chain1000 in the ns/op table:\n%s", out)
	}
	if strings.Count(out, "| workload |") != 2 {
		t.Errorf("want two tables:\n%s", out)
	}

	// A faster chain meets the throughput goal and misses the C one.
	res, err = parse(strings.NewReader("BenchmarkC/chain1000-2\t3\t40000000 ns/op\t40000 ns/dispatch\n" +
		"BenchmarkGo/chain1000-2\t3\t50000000 ns/op\t50000 ns/dispatch\n" +
		"BenchmarkGo/chain1000_eval-2\t3\t150000000 ns/op\t150000 ns/dispatch\n"))
	if err != nil {
		t.Fatal(err)
	}
	rendered(t, res, meta{},
		"throughput of host-Eval chain: 3.00x (50,000 vs 150,000 ns/dispatch) — **MET**",
		"vkflow <= 1.15x C (ns/dispatch): 1.25 (50,000 vs 40,000 ns/dispatch) — **NOT MET**",
		"dispatch1024 vkflow/C time <= 1.05: **NOT MEASURED**",
	)
}

// Replayed workloads: Go benchmarks compared with a C workload of another
// name (baselineOf).
const pairedInput = `BenchmarkC/chain1000-2	3	40000000 ns/op	40000 ns/dispatch
BenchmarkC/chain1000_cmdbuf-2	10	6000000 ns/op	6000 ns/dispatch
BenchmarkC/chain1000_cmdbuf-2	10	5000000 ns/op	5000 ns/dispatch
BenchmarkC/wide8_cmdbuf-2	50	10000000 ns/op
BenchmarkC/wide8_2q-2	50	13000000 ns/op
BenchmarkC/diamond8_cmdbuf-2	50	7000000 ns/op
BenchmarkC/diamond8_2q-2	50	8000000 ns/op
BenchmarkC/diamond8_cmdbuf-2	50	7400000 ns/op
BenchmarkGo/chain1000-2	3	45000000 ns/op	45000 ns/dispatch
BenchmarkGo/seq_chain1000_onecmdbuf-2	10	6600000 ns/op	6600 ns/dispatch
BenchmarkGo/graph_chain1000-2	10	6000000 ns/op	6000 ns/dispatch
BenchmarkGo/seq_wide8_onecmdbuf-2	50	11000000 ns/op
BenchmarkGo/graph_wide8_1q-2	50	12000000 ns/op
BenchmarkGo/graph_wide8_2q-2	50	15000000 ns/op
BenchmarkGo/graph_diamond8_1q-2	50	8000000 ns/op
BenchmarkGo/graph_diamond8_1q-2	50	10000000 ns/op
BenchmarkGo/graph_diamond8_2q-2	50	9900000 ns/op
`

func TestPairedBaselines(t *testing.T) {
	res, err := parse(strings.NewReader(pairedInput))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cName string
		cNs, goNs   float64 // median ns/dispatch for chains, else ns/op
		chain       bool
	}{
		{"chain1000", "chain1000", 40000, 45000, true},
		{"seq_chain1000_onecmdbuf", "chain1000_cmdbuf", 5500, 6600, true},
		{"graph_chain1000", "chain1000_cmdbuf", 5500, 6000, true},
		{"seq_wide8_onecmdbuf", "wide8_cmdbuf", 10e6, 11e6, false},
		{"graph_wide8_1q", "wide8_cmdbuf", 10e6, 12e6, false},
		{"graph_wide8_2q", "wide8_2q", 13e6, 15e6, false},
		{"graph_diamond8_1q", "diamond8_cmdbuf", 7.2e6, 9e6, false},
		{"graph_diamond8_2q", "diamond8_2q", 8e6, 9.9e6, false},
	} {
		r, ok := res.find(tc.name)
		if !ok || !r.hasC || !r.hasGo || r.cName != tc.cName || r.chain() != tc.chain {
			t.Errorf("%s: %+v", tc.name, r)
			continue
		}
		c, g := r.c.ns, r.vf.ns
		if tc.chain {
			c, g = r.c.perDispatch, r.vf.perDispatch
		}
		if c != tc.cNs || g != tc.goNs {
			t.Errorf("%s: C %v, Go %v; want %v, %v", tc.name, c, g, tc.cNs, tc.goNs)
		}
	}
	// A C workload compared under other names is no row of its own.
	for _, name := range []string{"chain1000_cmdbuf", "wide8_cmdbuf", "wide8_2q", "diamond8_cmdbuf", "diamond8_2q"} {
		if r, ok := res.find(name); ok {
			t.Errorf("%s is a row: %+v", name, r)
		}
	}

	rendered(t, res, meta{},
		"| seq_chain1000_onecmdbuf (C: chain1000_cmdbuf) | 5,500 | 6,600 | 1.20 |",
		"| graph_chain1000 (C: chain1000_cmdbuf) | 5,500 | 6,000 | 1.09 |",
		"| graph_wide8_1q (C: wide8_cmdbuf) | 10,000,000 | 12,000,000 | 1.20 |",
		"- graph_chain1000 (C: chain1000_cmdbuf): C 5,000–6,000 ns/dispatch (2 runs); vkflow 6,000–6,000 ns/dispatch (1 runs)",
		"graph chain: vkflow graph_chain1000 <= 1.10x C chain1000_cmdbuf (ns/dispatch): 1.09 (6,000 vs 5,500 ns/dispatch) — **MET**",
		"graph chain: >= 3x faster than the per-submit chain1000 (vkflow): 7.50x (6,000 vs 45,000 ns/dispatch) — **MET**",
		"| graph_wide8_2q (C: wide8_2q) | 13,000,000 | 15,000,000 | 1.15 |",
		"| graph_diamond8_1q (C: diamond8_cmdbuf) | 7,200,000 | 9,000,000 | 1.25 |",
		"| graph_diamond8_2q (C: diamond8_2q) | 8,000,000 | 9,900,000 | 1.24 |",
		"- graph_diamond8_1q (C: diamond8_cmdbuf): C 7,000,000–7,400,000 (2 runs); vkflow 8,000,000–10,000,000 (2 runs)",
		"- graph_diamond8_2q (C: diamond8_2q): C 8,000,000–8,000,000 (1 runs); vkflow 9,900,000–9,900,000 (1 runs)",
		// The 2-queue graphs against their 1-queue forms stay.
		"| graph_wide8_2q | graph_wide8_1q | 12,000,000 | 15,000,000 | 1.25 |",
		"| graph_diamond8_2q | graph_diamond8_1q | 9,000,000 | 9,900,000 | 1.10 |",
	)

	// Without the Go benchmarks paired with it, a C workload is a row.
	res, err = parse(strings.NewReader("BenchmarkC/chain1000_cmdbuf-2\t10\t6000000 ns/op\t6000 ns/dispatch\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := res.find("chain1000_cmdbuf"); !ok || !r.hasC || r.hasGo || r.c.perDispatch != 6000 {
		t.Fatalf("chain1000_cmdbuf alone: %+v", r)
	}
	rendered(t, res, meta{},
		"| chain1000_cmdbuf | 6,000 | — | — |",
		"graph chain: vkflow graph_chain1000 <= 1.10x C chain1000_cmdbuf (ns/dispatch): **NOT MEASURED**",
		"graph chain: >= 3x faster than the per-submit chain1000 (vkflow): **NOT MEASURED**",
	)
}

// rendered renders res and reports each of wants that the output lacks.
func rendered(t *testing.T, res *results, m meta, wants ...string) string {
	t.Helper()
	var buf bytes.Buffer
	render(&buf, res, m)
	out := buf.String()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	return out
}

// The pinned pass: pinned_<name> on both sides, the Go lines without a
// -N suffix (GOMAXPROCS=1), as bench/run.sh writes them.
const pinnedInput = `BenchmarkC/pinned_dispatch1024-2	9000	20000 ns/op
BenchmarkC/pinned_empty_submit-2	9000	8000 ns/op
BenchmarkGo/pinned_dispatch1024         	10000	21000 ns/op
BenchmarkGo/pinned_dispatch1024         	10000	23000 ns/op
BenchmarkGo/pinned_dispatch1024         	10000	22000 ns/op
BenchmarkGo/pinned_empty_submit         	10000	9200 ns/op
BenchmarkC/pinned_dispatch1024-2	9000	22000 ns/op
`

func TestPinned(t *testing.T) {
	res, err := parse(strings.NewReader(sampleInput + pinnedInput))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.rows() {
		if pinned(r.name) {
			t.Errorf("pinned workload %s in the main table", r.name)
		}
	}
	rows := res.pinnedRows()
	if len(rows) != 2 || rows[0].name != "dispatch1024" || rows[1].name != "empty_submit" {
		t.Fatalf("pinned rows: %+v", rows)
	}
	if r := rows[0]; r.c.ns != 21000 || r.vf.ns != 22000 || r.c.n != 2 || r.vf.n != 3 {
		t.Fatalf("pinned dispatch1024: %+v", r)
	}
	rendered(t, res, meta{},
		"| dispatch1024 | 100,000 | 104,000 | 1.04 |",
		"| dispatch1024 | 21,000 | 22,000 | 1.05 | 20,000–22,000 (2) | 21,000–23,000 (3) |",
		"| empty_submit | 8,000 | 9,200 | 1.15 |",
		"- pinned dispatch1024 vkflow/C time <= 1.10: 1.05 (22,000 vs 21,000 ns/op) — **MET**",
	)
	// Without a pinned pass: no table, the goal not measured.
	res, err = parse(strings.NewReader(sampleInput))
	if err != nil {
		t.Fatal(err)
	}
	out := rendered(t, res, meta{}, "- pinned dispatch1024 vkflow/C time <= 1.10: **NOT MEASURED**")
	if strings.Contains(out, "(pinned)") {
		t.Errorf("a pinned table without pinned runs:\n%s", out)
	}
}

// dispatch_poll1024 (C with the polling wait) is a C-only row, and the
// report compares vkflow's dispatch1024 (whose waits poll) with it too.
func TestPolledDispatch(t *testing.T) {
	const in = "BenchmarkC/dispatch_poll1024-2\t9000\t40000 ns/op\n"
	res, err := parse(strings.NewReader(sampleInput + in))
	if err != nil {
		t.Fatal(err)
	}
	rows := res.rows()
	if rows[0].name != "dispatch1024" || rows[1].name != "dispatch_poll1024" {
		t.Fatalf("row order: %v", rows)
	}
	rendered(t, res, meta{},
		"| dispatch_poll1024 | 40,000 | — | — |",
		"- dispatch1024 vkflow against C dispatch_poll1024 (both poll before they sleep): 2.60 (104,000 vs 40,000 ns/op) — reported",
	)
	if out := rendered(t, mustParse(t, sampleInput), meta{}); strings.Contains(out, "both poll") {
		t.Errorf("a polled comparison without dispatch_poll1024:\n%s", out)
	}
}

func mustParse(t *testing.T, s string) *results {
	t.Helper()
	res, err := parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The C diamonds without their Go benchmarks are rows of their own, after
// the wide ones; a Go diamond without its C side has the C column empty.
func TestDiamondRows(t *testing.T) {
	res := mustParse(t, "BenchmarkC/diamond8_2q-2\t50\t8000000 ns/op\n"+
		"BenchmarkC/diamond8_cmdbuf-2\t50\t7000000 ns/op\n"+
		"BenchmarkC/wide8_2q-2\t50\t13000000 ns/op\n")
	var names []string
	for _, r := range res.rows() {
		names = append(names, r.name)
	}
	if got := strings.Join(names, " "); got != "wide8_2q diamond8_cmdbuf diamond8_2q" {
		t.Fatalf("rows: %s", got)
	}
	rendered(t, res, meta{},
		"| diamond8_cmdbuf | 7,000,000 | — | — |",
		"| diamond8_2q | 8,000,000 | — | — |",
	)

	res = mustParse(t, "BenchmarkC/diamond8_cmdbuf-2\t50\t7000000 ns/op\n"+
		"BenchmarkGo/graph_diamond8_2q-2\t50\t9900000 ns/op\n"+
		"BenchmarkGo/graph_diamond8_1q-2\t50\t9000000 ns/op\n")
	r, ok := res.find("graph_diamond8_2q")
	if !ok || r.hasC || !r.hasGo || r.cName != "diamond8_2q" {
		t.Fatalf("graph_diamond8_2q without C diamond8_2q: %+v", r)
	}
	if _, ok := res.find("diamond8_cmdbuf"); ok {
		t.Fatal("diamond8_cmdbuf is a row next to graph_diamond8_1q")
	}
	rendered(t, res, meta{},
		"| graph_diamond8_1q (C: diamond8_cmdbuf) | 7,000,000 | 9,000,000 | 1.29 |",
		"| graph_diamond8_2q (C: diamond8_2q) | — | 9,900,000 | — |",
		"| graph_diamond8_2q | graph_diamond8_1q | 9,000,000 | 9,900,000 | 1.10 |",
	)
}
