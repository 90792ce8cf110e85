// Command report turns benchmark output into the vkflow-versus-C table.
//
// It reads Go-benchmark-format lines from stdin, both BenchmarkC/<name>
// (bench/baseline/baseline.c) and BenchmarkGo/<name> (bench/bench_test.go),
// any number of runs of each, takes the median ns/op per name, pairs C and
// Go by workload name (or by baselineOf, for Go benchmarks whose C side has
// another name) and prints a markdown table, the allocations per
// submit+wait, and whether each goal is met. Workloads that report an
// ns/dispatch metric (the chains of dependent dispatches, whose ns/op is per
// chain) go into a second table compared by median ns/dispatch. Other lines are ignored, except
// the C baseline's "baseline: device ..." line (which may also come from the
// file given with -device-log) and go test's "cpu:" line. Workloads named
// pinned_<name> (bench/run.sh's pinned pass, pinned.go) get a table and a
// goal of their own.
//
// Usage:
//
//	go run ./bench/report [-device-log FILE] [-date YYYY-MM-DD] < raw.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Goals and workload names.
const (
	dispatchGoal = 1.05 // dispatch1024: vkflow ns/op <= 1.05 x C
	e2eGoal      = 0.90 // mul16m_e2e: vkflow GB/s >= 0.9 x C
	// kernelGoal: mul16m_kernel_vec4, the same SPIR-V timed kernel only,
	// vkflow time <= 1.03 x C, paired by round (issue 31).
	kernelGoal   = 1.03
	kernelName   = "mul16m_kernel_vec4"
	dispatchName = "dispatch1024"
	// dispatchPollName is dispatch1024 in C with the polling host wait.
	dispatchPollName = "dispatch_poll1024"
	e2eName          = "mul16m_e2e"
	allocsName       = "allocs_submit_wait"
	exactAllocsOp    = "exact-allocs/op"

	// Chains of dependent dispatches, compared per dispatch.
	perDispatch      = "ns/dispatch"
	chainName        = "chain1000"      // timeline-linked, one host wait
	chainEvalName    = "chain1000_eval" // host Eval per dispatch (Go only)
	chainSpeedupGoal = 3.0              // chain1000 dispatches/s >= 3 x chain1000_eval's
	chainCGoal       = 1.15             // chain1000: vkflow ns/dispatch <= 1.15 x C

	// A chain recorded once by a graph and replayed (issue 10).
	graphChainName    = "graph_chain1000"
	chainCmdbufName   = "chain1000_cmdbuf" // C: the chain in one command buffer
	graphChainCGoal   = 1.10               // graph_chain1000 ns/dispatch <= 1.1 x C chain1000_cmdbuf
	graphChainSpeedup = 3.0                // graph_chain1000 dispatches/s >= 3 x vkflow chain1000's
)

// baselineOf names the C workload that a Go benchmark is compared with when
// the names differ: the workloads recorded once into one command buffer,
// whether by a sequence or a graph. A C workload named here is no row of
// its own while one of its Go benchmarks is in the input.
var baselineOf = map[string]string{
	"seq_chain1000_onecmdbuf": chainCmdbufName,
	graphChainName:            chainCmdbufName,
	"seq_wide8_onecmdbuf":     "wide8_cmdbuf",
	"graph_wide8_1q":          "wide8_cmdbuf",
	"graph_wide8_2q":          "wide8_2q", // C with the same two-queue hand-off
	"graph_diamond8_1q":       "diamond8_cmdbuf",
	"graph_diamond8_2q":       "diamond8_2q", // C with the same segments, waits and queues
}

// goPairs compare two Go benchmarks of the same run: a graph compiled on
// two logical queues against the same graph on one, spread over both
// (graph.PlaceSpread: the hand-offs C does too) and placed by cost (the
// default; the goal on a GPU is at most 1.0x).
var goPairs = []struct{ name, base string }{
	{"graph_wide8_2q", "graph_wide8_1q"},
	{"graph_diamond8_2q", "graph_diamond8_1q"},
	{"graph_wide8_2q_bycost", "graph_wide8_1q"},
	{"graph_diamond8_2q_bycost", "graph_diamond8_1q"},
}

// order is the table's row order; other names follow, sorted.
var order = []string{
	dispatchName, dispatchPollName, "empty_submit", "mul16m_e2e", "mul16m_kernel_vec4",
	"mul16m_kernel_scalar", "manager_create", chainName, "chain1000_1q", chainEvalName,
	chainCmdbufName, "seq_chain1000_onecmdbuf", graphChainName,
	"wide8_cmdbuf", "wide8_2q", "seq_wide8_onecmdbuf", "graph_wide8_1q", "graph_wide8_2q",
	"graph_wide8_2q_bycost", "diamond8_cmdbuf", "diamond8_2q", "graph_diamond8_1q", "graph_diamond8_2q",
	"graph_diamond8_2q_bycost",
}

// sample is one benchmark line.
type sample struct {
	round   int // the bench/run.sh round it came from ("round: N" lines); 0 without
	ns      float64
	bytesOp float64 // bytes per op from GB/s or MB/s, 0 if none
	metrics map[string]float64
}

// results holds every sample, keyed by side ("C" or "Go") and workload.
type results struct {
	runs   map[string]map[string][]sample
	device string
	cpu    string // go test's cpu: line
}

var (
	benchLine  = regexp.MustCompile(`^Benchmark(C|Go)/(\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)
	roundLine  = regexp.MustCompile(`^round: (\d+)$`)
	deviceLine = regexp.MustCompile(`^baseline: device \d+: (.*)$`)
)

// parse reads benchmark output. Malformed benchmark lines are errors.
func parse(r io.Reader) (*results, error) {
	res := &results{runs: map[string]map[string][]sample{"C": {}, "Go": {}}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	round := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if m := roundLine.FindStringSubmatch(line); m != nil {
			round, _ = strconv.Atoi(m[1])
			continue
		}
		if m := deviceLine.FindStringSubmatch(line); m != nil {
			res.device = m[1]
			continue
		}
		if cpu, ok := strings.CutPrefix(line, "cpu: "); ok {
			res.cpu = cpu
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		side, name := m[1], m[2]
		s, err := parseMetrics(m[4])
		if err != nil {
			return nil, fmt.Errorf("line %d: %v: %q", n, err, line)
		}
		s.round = round
		res.runs[side][name] = append(res.runs[side][name], s)
	}
	return res, sc.Err()
}

// parseMetrics reads the "<value> <unit>" pairs after the iteration count.
func parseMetrics(text string) (sample, error) {
	f := strings.Fields(text)
	if len(f) == 0 || len(f)%2 != 0 {
		return sample{}, fmt.Errorf("want <value> <unit> pairs")
	}
	s := sample{ns: math.NaN(), metrics: map[string]float64{}}
	for i := 0; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return sample{}, fmt.Errorf("bad value %q", f[i])
		}
		s.metrics[f[i+1]] = v
	}
	ns, ok := s.metrics["ns/op"]
	if !ok || ns <= 0 {
		return sample{}, fmt.Errorf("no positive ns/op")
	}
	s.ns = ns
	switch {
	case s.metrics["GB/s"] > 0:
		s.bytesOp = s.metrics["GB/s"] * ns // GB/s = bytes / ns
	case s.metrics["MB/s"] > 0:
		s.bytesOp = s.metrics["MB/s"] * ns / 1e3
	}
	return s, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// stat is one side of one workload.
type stat struct {
	n        int
	ns       float64 // median ns/op
	min, max float64 // ns/op over the runs
	gbps     float64 // bytes/op over the median ns/op; NaN without throughput
	// perDispatch, minPD, maxPD: median, min and max ns/dispatch over the
	// runs that report it; NaN if none does.
	perDispatch, minPD, maxPD float64
}

func summarize(ss []sample) (stat, bool) {
	nan := math.NaN()
	if len(ss) == 0 {
		return stat{ns: nan, gbps: nan, perDispatch: nan, minPD: nan, maxPD: nan}, false
	}
	var ns, bytes, pd []float64
	for _, s := range ss {
		ns = append(ns, s.ns)
		if s.bytesOp > 0 {
			bytes = append(bytes, s.bytesOp)
		}
		if v, ok := s.metrics[perDispatch]; ok && v > 0 {
			pd = append(pd, v)
		}
	}
	st := stat{n: len(ss), ns: median(ns), min: slices.Min(ns), max: slices.Max(ns), gbps: nan,
		perDispatch: nan, minPD: nan, maxPD: nan}
	if len(bytes) > 0 {
		st.gbps = median(bytes) / st.ns
	}
	if len(pd) > 0 {
		st.perDispatch, st.minPD, st.maxPD = median(pd), slices.Min(pd), slices.Max(pd)
	}
	return st, true
}

// row is one workload of the table.
type row struct {
	name  string // the Go benchmark's, or the C workload's without one
	cName string // the C workload compared: name, or baselineOf[name]
	c, vf stat
	hasC  bool
	hasGo bool
}

// label is the row's name, with the C workload's when it differs.
func (r row) label() string {
	if r.cName != r.name {
		return fmt.Sprintf("%s (C: %s)", r.name, r.cName)
	}
	return r.name
}

func (r row) timeRatio() float64 { return r.vf.ns / r.c.ns }
func (r row) gbpsRatio() float64 { return r.vf.gbps / r.c.gbps }

// chain reports whether the row is a chain of dispatches, compared per
// dispatch: a side reports ns/dispatch.
func (r row) chain() bool { return !math.IsNaN(r.c.perDispatch) || !math.IsNaN(r.vf.perDispatch) }

// dispatchRatio is vkflow's ns/dispatch over C's.
func (r row) dispatchRatio() float64 { return r.vf.perDispatch / r.c.perDispatch }

func (res *results) rows() []row {
	names := map[string]bool{}
	paired := map[string]bool{} // C workloads compared under Go names
	for name := range res.runs["Go"] {
		if pinned(name) {
			continue // pinned.go
		}
		names[name] = true
		if c, ok := baselineOf[name]; ok {
			paired[c] = true
		}
	}
	for name := range res.runs["C"] {
		if !paired[name] && !pinned(name) {
			names[name] = true
		}
	}
	delete(names, allocsName)
	var list []string
	for _, n := range order {
		if names[n] {
			list = append(list, n)
			delete(names, n)
		}
	}
	var rest []string
	for n := range names {
		rest = append(rest, n)
	}
	slices.Sort(rest)
	list = append(list, rest...)
	var out []row
	for _, n := range list {
		r := row{name: n, cName: n}
		if c, ok := baselineOf[n]; ok {
			r.cName = c
		}
		r.c, r.hasC = summarize(res.runs["C"][r.cName])
		r.vf, r.hasGo = summarize(res.runs["Go"][n])
		out = append(out, r)
	}
	return out
}

func (res *results) find(name string) (row, bool) {
	for _, r := range res.rows() {
		if r.name == name {
			return r, true
		}
	}
	return row{}, false
}

// group formats a non-negative number with thousands separators.
func group(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtNs(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "—"
	}
	return group(v)
}

func fmtNum(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "NOT MET"
}

// meta is the header's machine description.
type meta struct {
	date, arch, cpu, device string
}

func render(w io.Writer, res *results, m meta) {
	fmt.Fprintf(w, "## vkflow vs raw C Vulkan\n\n")
	fmt.Fprintf(w, "%s · %s · %s · %s\n\n", m.date, m.arch, m.cpu, m.device)

	rows := res.rows()
	nC, nGo := 0, 0
	for _, r := range rows {
		nC, nGo = max(nC, r.c.n), max(nGo, r.vf.n)
	}
	fmt.Fprintf(w, "Median ns/op per workload over all runs (up to %d C, %d vkflow). Time ratio: lower is better; GB/s ratio: higher is better.\n\n", nC, nGo)
	fmt.Fprintln(w, "| workload | C ns/op | vkflow ns/op | vkflow/C time | C GB/s | vkflow GB/s | vkflow/C GB/s |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	var chains []row
	for _, r := range rows {
		if r.chain() {
			chains = append(chains, r)
			continue
		}
		ratio, gr := "—", "—"
		if r.hasC && r.hasGo {
			ratio = fmtNum(r.timeRatio(), 2)
			gr = fmtNum(r.gbpsRatio(), 2)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.label(),
			fmtNs(r.c.ns, r.hasC), fmtNs(r.vf.ns, r.hasGo), ratio,
			fmtNum(r.c.gbps, 2), fmtNum(r.vf.gbps, 2), gr)
	}

	if len(chains) > 0 {
		renderChains(w, res, chains)
	}
	renderGoPairs(w, res)
	renderPaired(w, res)
	renderPinned(w, res)

	fmt.Fprintf(w, "\nSpread (min–max ns/op over the runs; ns/dispatch for the chains):\n\n")
	for _, r := range rows {
		if r.chain() {
			var parts []string
			if r.hasC {
				parts = append(parts, fmt.Sprintf("C %s–%s ns/dispatch (%d runs)", fmtNs(r.c.minPD, true), fmtNs(r.c.maxPD, true), r.c.n))
			}
			if r.hasGo {
				parts = append(parts, fmt.Sprintf("vkflow %s–%s ns/dispatch (%d runs)", fmtNs(r.vf.minPD, true), fmtNs(r.vf.maxPD, true), r.vf.n))
			}
			fmt.Fprintf(w, "- %s: %s\n", r.label(), strings.Join(parts, "; "))
			continue
		}
		var parts []string
		if r.hasC {
			parts = append(parts, fmt.Sprintf("C %s–%s (%d runs)", group(r.c.min), group(r.c.max), r.c.n))
		}
		if r.hasGo {
			parts = append(parts, fmt.Sprintf("vkflow %s–%s (%d runs)", group(r.vf.min), group(r.vf.max), r.vf.n))
		}
		fmt.Fprintf(w, "- %s: %s\n", r.label(), strings.Join(parts, "; "))
	}

	// Allocations.
	allocs := res.runs["Go"][allocsName]
	allocsKnown := len(allocs) > 0
	var worst, worstExact, worstBytes float64
	exactKnown := false
	for _, s := range allocs {
		a, ok := s.metrics["allocs/op"]
		if !ok {
			allocsKnown = false
		}
		worst = max(worst, a)
		worstBytes = max(worstBytes, s.metrics["B/op"])
		if e, ok := s.metrics[exactAllocsOp]; ok {
			worstExact = max(worstExact, e)
			exactKnown = true
		}
	}
	fmt.Fprintf(w, "\nAllocations per submit+wait (BenchmarkGo/%s, the dispatch1024 path): ", allocsName)
	if allocsKnown {
		fmt.Fprintf(w, "%s allocs/op, %s B/op (worst of %d runs", fmtNum(worst, 0), fmtNum(worstBytes, 0), len(allocs))
		if exactKnown {
			fmt.Fprintf(w, "; exact average %s allocs/op", fmtNum(worstExact, 4))
		}
		fmt.Fprintf(w, ").\n")
	} else {
		fmt.Fprintf(w, "not measured.\n")
	}

	// Goals.
	fmt.Fprintf(w, "\nGoals:\n\n")
	if r, ok := res.find(dispatchName); ok && r.hasC && r.hasGo {
		fmt.Fprintf(w, "- dispatch1024 vkflow/C time <= %.2f: %.2f (%s vs %s ns/op) — **%s**\n", dispatchGoal,
			r.timeRatio(), group(r.vf.ns), group(r.c.ns), verdict(r.timeRatio() <= dispatchGoal))
	} else {
		fmt.Fprintf(w, "- dispatch1024 vkflow/C time <= %.2f: **NOT MEASURED**\n", dispatchGoal)
	}
	// vkflow's host waits poll before they sleep (WithWaitSpin), and
	// dispatch1024 in C sleeps at once: dispatch_poll1024 is the C round
	// trip that waits as vkflow does.
	if r, ok := res.find(dispatchName); ok && r.hasGo {
		if p, ok := res.find(dispatchPollName); ok && p.hasC {
			fmt.Fprintf(w, "- dispatch1024 vkflow against C %s (both poll before they sleep): %.2f (%s vs %s ns/op) — reported\n",
				dispatchPollName, r.vf.ns/p.c.ns, group(r.vf.ns), group(p.c.ns))
		}
	}
	renderPinnedGoal(w, res)
	renderKernelGoal(w, res)
	if r, ok := res.find(e2eName); ok && r.hasC && r.hasGo && !math.IsNaN(r.gbpsRatio()) {
		fmt.Fprintf(w, "- mul16m_e2e vkflow GB/s >= %.1fx C (vec4 e2e): %s vs %s GB/s = %.2fx — **%s**\n", e2eGoal,
			fmtNum(r.vf.gbps, 2), fmtNum(r.c.gbps, 2), r.gbpsRatio(), verdict(r.gbpsRatio() >= e2eGoal))
	} else {
		fmt.Fprintf(w, "- mul16m_e2e vkflow GB/s >= %.1fx C: **NOT MEASURED**\n", e2eGoal)
	}
	if allocsKnown {
		ok := worst == 0 && (!exactKnown || worstExact == 0)
		exact := ""
		if exactKnown {
			// allocs/op is rounded down: the exact average decides.
			exact = fmt.Sprintf(" (worst exact average %s)", fmtNum(worstExact, 4))
		}
		fmt.Fprintf(w, "- allocs per submit+wait == 0: %s allocs/op%s — **%s**\n", fmtNum(worst, 0), exact, verdict(ok))
	} else {
		fmt.Fprintf(w, "- allocs per submit+wait == 0: **NOT MEASURED**\n")
	}
	ch, okC := res.find(chainName)
	ev, okE := res.find(chainEvalName)
	if okC && okE && !math.IsNaN(ch.vf.perDispatch) && !math.IsNaN(ev.vf.perDispatch) {
		x := ev.vf.perDispatch / ch.vf.perDispatch
		fmt.Fprintf(w, "- chain: vkflow timeline chain >= %.0fx throughput of host-Eval chain: %.2fx (%s vs %s ns/dispatch) — **%s**\n",
			chainSpeedupGoal, x, group(ch.vf.perDispatch), group(ev.vf.perDispatch), verdict(x >= chainSpeedupGoal))
	} else {
		fmt.Fprintf(w, "- chain: vkflow timeline chain >= %.0fx throughput of host-Eval chain: **NOT MEASURED**\n", chainSpeedupGoal)
	}
	if okC && !math.IsNaN(ch.dispatchRatio()) {
		fmt.Fprintf(w, "- chain: vkflow <= %.2fx C (ns/dispatch): %.2f (%s vs %s ns/dispatch) — **%s**\n", chainCGoal,
			ch.dispatchRatio(), group(ch.vf.perDispatch), group(ch.c.perDispatch), verdict(ch.dispatchRatio() <= chainCGoal))
	} else {
		fmt.Fprintf(w, "- chain: vkflow <= %.2fx C (ns/dispatch): **NOT MEASURED**\n", chainCGoal)
	}

	renderGraphGoals(w, res, ch, okC)
}

// renderGraphGoals prints the goals of the graph's replayed chain: against
// the C chain in one command buffer, and against vkflow's per-submit chain
// ch (okC: measured).
func renderGraphGoals(w io.Writer, res *results, ch row, okC bool) {
	g, ok := res.find(graphChainName)
	prefix := fmt.Sprintf("- graph chain: vkflow %s <= %.2fx C %s (ns/dispatch): ", graphChainName, graphChainCGoal, chainCmdbufName)
	if x := g.dispatchRatio(); ok && !math.IsNaN(x) {
		fmt.Fprintf(w, "%s%.2f (%s vs %s ns/dispatch) — **%s**\n", prefix, x,
			group(g.vf.perDispatch), group(g.c.perDispatch), verdict(x <= graphChainCGoal))
	} else {
		fmt.Fprintf(w, "%s**NOT MEASURED**\n", prefix)
	}
	prefix = fmt.Sprintf("- graph chain: >= %.0fx faster than the per-submit %s (vkflow): ", graphChainSpeedup, chainName)
	if x := ch.vf.perDispatch / g.vf.perDispatch; ok && okC && !math.IsNaN(x) {
		fmt.Fprintf(w, "%s%.2fx (%s vs %s ns/dispatch) — **%s**\n", prefix, x,
			group(g.vf.perDispatch), group(ch.vf.perDispatch), verdict(x >= graphChainSpeedup))
	} else {
		fmt.Fprintf(w, "%s**NOT MEASURED**\n", prefix)
	}
}

// renderGoPairs prints the goPairs measured: vkflow against vkflow in the
// same run, by median ns/op.
func renderGoPairs(w io.Writer, res *results) {
	header := false
	for _, p := range goPairs {
		a, okA := summarize(res.runs["Go"][p.name])
		b, okB := summarize(res.runs["Go"][p.base])
		if !okA || !okB {
			continue
		}
		if !header {
			fmt.Fprintf(w, "\nvkflow against vkflow in the same run (median ns/op): a graph on two logical queues against the same graph on one. "+
				"Ratio: lower is better.\n\n")
			fmt.Fprintln(w, "| workload | baseline | baseline ns/op | ns/op | time ratio |")
			fmt.Fprintln(w, "|---|---|---:|---:|---:|")
			header = true
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", p.name, p.base, group(b.ns), group(a.ns), fmtNum(a.ns/b.ns, 2))
	}
}

// renderChains prints the chains of dependent dispatches per dispatch, with
// each vkflow chain's throughput relative to the host-Eval chain.
func renderChains(w io.Writer, res *results, chains []row) {
	eval := math.NaN()
	if ev, ok := res.find(chainEvalName); ok {
		eval = ev.vf.perDispatch
	}
	fmt.Fprintf(w, "\nChains of dependent dispatches, per dispatch (median ns/dispatch; their ns/op is per whole chain). "+
		"Last column: vkflow dispatches/s over those of %s (a host Eval per dispatch).\n\n", chainEvalName)
	fmt.Fprintln(w, "| workload | C ns/dispatch | vkflow ns/dispatch | vkflow/C time | vkflow dispatches/s | vs host-Eval chain |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for _, r := range chains {
		ratio := "—"
		if r.hasC && r.hasGo {
			ratio = fmtNum(r.dispatchRatio(), 2)
		}
		rate, vsEval := "—", "—"
		if !math.IsNaN(r.vf.perDispatch) {
			rate = group(1e9 / r.vf.perDispatch)
			if x := eval / r.vf.perDispatch; !math.IsNaN(x) {
				vsEval = fmtNum(x, 2) + "x"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.label(),
			fmtNs(r.c.perDispatch, r.hasC), fmtNs(r.vf.perDispatch, r.hasGo), ratio, rate, vsEval)
	}
}

// cpuModel reads the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func machine() string {
	out, err := exec.Command("uname", "-m").Output()
	if err == nil && len(strings.TrimSpace(string(out))) > 0 {
		return strings.TrimSpace(string(out))
	}
	return runtime.GOARCH
}

// deviceFromLog returns the device named in a C baseline stderr log.
func deviceFromLog(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r, err := parse(f)
	if err != nil {
		return "", err
	}
	return r.device, nil
}

func main() {
	deviceLog := flag.String("device-log", "", "C baseline stderr log to read the device name from")
	date := flag.String("date", "", "date for the header (default today, YYYY-MM-DD)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: report [-device-log FILE] [-date YYYY-MM-DD] < benchmark-output\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	res, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
	if len(res.runs["C"]) == 0 && len(res.runs["Go"]) == 0 {
		fmt.Fprintln(os.Stderr, "report: no BenchmarkC/ or BenchmarkGo/ lines on stdin")
		os.Exit(1)
	}
	m := meta{date: *date, arch: machine(), cpu: cpuModel(), device: res.device}
	if m.date == "" {
		m.date = time.Now().Format("2006-01-02")
	}
	if m.cpu == "" {
		m.cpu = res.cpu
	}
	if *deviceLog != "" {
		d, err := deviceFromLog(*deviceLog)
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		if d != "" {
			m.device = d
		}
	}
	for _, p := range []*string{&m.cpu, &m.device} {
		if *p == "" {
			*p = "unknown"
		}
	}
	m.cpu = "CPU: " + m.cpu
	m.device = "device: " + m.device
	render(os.Stdout, res, m)
}
