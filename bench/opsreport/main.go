// Command opsreport turns the operator benchmarks' output into the table
// of bench/ops.sh: vkflow's ops (BenchmarkOps/<name>, bench/ops_test.go)
// against the raw C Vulkan kernels (BenchmarkC/<name>,
// bench/baseline/ops.c) and NumPy (BenchmarkNumPy/<name>,
// bench/ops_numpy.py), all from the same run.
//
// It reads benchmark lines from stdin, any number of runs of each, takes
// the median ns/op per name (for a vkflow line that reports med-ns/op, the
// median time of its Runs, that instead of its mean ns/op) and derives each figure from it (GB/s or
// GFLOP/s, with the bytes or operations per op fixed below), so both sides
// count the same bytes. It also reads the "numpy: <label>: ..." lines (BLAS
// and its threads), go test's "cpu:" line and the C side's "ops: device 0:
// ..." line (stdin or -device-log). A workload whose vkflow side has no
// result is shown as missing.
//
// Usage:
//
//	go run ./bench/opsreport [-device-log FILE] [-date YYYY-MM-DD] < raw.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	mi      = 1 << 20
	matmulN = 1024
)

// comparison is one row: vkflow's workload against a baseline.
type comparison struct {
	what      string  // what is compared, for the table
	vkflow    string  // BenchmarkOps/<vkflow>
	base      string  // Benchmark<baseSide>/<base>
	baseSide  string  // "C" or "NumPy"
	vfAmount  float64 // vkflow's bytes (GB/s) or flops (GFLOP/s) per op
	bAmount   float64 // the baseline's
	unit      string  // "GB/s" or "GFLOP/s"
	goal      float64 // vkflow/baseline >= goal; 0: reported only
	goalLabel string
}

var comparisons = []comparison{
	{"add, 1Mi f32: ops \"add\" vs C vec4 add", "add_1m", "add_1m", "C", 12 * mi, 12 * mi, "GB/s", 0.9, ">= 0.9x"},
	{"add, 16Mi f32: ops \"add\" vs C vec4 add", "add_16m", "add_16m", "C", 12 * 16 * mi, 12 * 16 * mi, "GB/s", 0.9, ">= 0.9x"},
	{"control, 1Mi: C's add_vec4.spv as a registered op vs C", "add_1m_ckernel", "add_1m", "C", 12 * mi, 12 * mi, "GB/s", 0, "context"},
	{"control, 16Mi: C's add_vec4.spv as a registered op vs C", "add_16m_ckernel", "add_16m", "C", 12 * 16 * mi, 12 * 16 * mi, "GB/s", 0, "context"},
	{"sum, 16Mi f32 (all axes) vs C vec4 copy", "sum_16m", "copy_16m", "C", 4 * 16 * mi, 8 * 16 * mi, "GB/s", 0.8, ">= 0.8x"},
	{"matmul 1024² f32 vs NumPy, default threads", "matmul_1024", "matmul_1024_default", "NumPy", 2 * matmulN * matmulN * matmulN, 2 * matmulN * matmulN * matmulN, "GFLOP/s", 0, "report"},
	{"matmul 1024² f32 vs NumPy, OPENBLAS_NUM_THREADS=1", "matmul_1024", "matmul_1024_1thread", "NumPy", 2 * matmulN * matmulN * matmulN, 2 * matmulN * matmulN * matmulN, "GFLOP/s", 0, "report"},
}

// results holds the ns/op samples by side and name, and the context lines.
type results struct {
	ns     map[string]map[string][]float64 // side -> name -> ns/op
	numpy  map[string]string               // label -> "NumPy 1.24.2, BLAS ..., 2 threads"
	device string
	cpu    string
}

var (
	benchLine  = regexp.MustCompile(`^Benchmark(C|Ops|NumPy)/(\S+?)(?:-\d+)?\s+(\d+)\s+(\d+(?:\.\d+)?) ns/op`)
	medianNs   = regexp.MustCompile(`\s(\d+(?:\.\d+)?) med-ns/op`)
	deviceLine = regexp.MustCompile(`^ops: device \d+: (.*)$`)
	numpyLine  = regexp.MustCompile(`^numpy: (\S+): (.*)$`)
)

func newResults() *results {
	return &results{ns: map[string]map[string][]float64{"C": {}, "Ops": {}, "NumPy": {}}, numpy: map[string]string{}}
}

// parse reads benchmark output; other lines are ignored.
func (res *results) parse(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := benchLine.FindStringSubmatch(line); m != nil {
			v := m[4]
			if med := medianNs.FindStringSubmatch(line); med != nil {
				v = med[1] // the Go side's median per Run, beside its mean
			}
			ns, err := strconv.ParseFloat(v, 64)
			if err != nil || ns <= 0 {
				return fmt.Errorf("bad ns/op in %q", line)
			}
			res.ns[m[1]][m[2]] = append(res.ns[m[1]][m[2]], ns)
		} else if m := deviceLine.FindStringSubmatch(line); m != nil {
			res.device = m[1]
		} else if m := numpyLine.FindStringSubmatch(line); m != nil {
			res.numpy[m[1]] = m[2]
		} else if cpu, ok := strings.CutPrefix(line, "cpu: "); ok {
			res.cpu = cpu
		}
	}
	return sc.Err()
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

// side is one side of a row: its median ns/op, how many samples, and the
// figure (GB/s or GFLOP/s) at the median.
type side struct {
	ns, figure float64
	n          int
}

func (res *results) side(s, name string, amount float64) side {
	v := res.ns[s][name]
	ns := median(v)
	return side{ns: ns, figure: amount / ns, n: len(v)}
}

// paired returns the median, min and max over the rounds of the per-round
// ratio vkflow/baseline of the figures, pairing the i-th baseline sample
// with the i-th group of vkflow samples (the median of each group: a round
// runs GO_COUNT vkflow samples per baseline sample). ok is false when the
// counts do not pair up.
func (res *results) paired(c comparison) (med, lo, hi float64, ok bool) {
	vf, b := res.ns["Ops"][c.vkflow], res.ns[c.baseSide][c.base]
	if len(b) == 0 || len(vf) == 0 || len(vf)%len(b) != 0 {
		return 0, 0, 0, false
	}
	per := len(vf) / len(b)
	var ratios []float64
	for i, bns := range b {
		vns := median(vf[i*per : (i+1)*per])
		ratios = append(ratios, (c.vfAmount/vns)/(c.bAmount/bns))
	}
	return median(ratios), slices.Min(ratios), slices.Max(ratios), true
}

func fmtNs(s side) string {
	if s.n == 0 {
		return "—"
	}
	return strconv.FormatFloat(s.ns/1e6, 'f', 3, 64) + " ms"
}

func fmtFig(s side, unit string) string {
	if s.n == 0 {
		return "missing"
	}
	return strconv.FormatFloat(s.figure, 'f', 2, 64) + " " + unit
}

func render(w io.Writer, res *results, date string) {
	fmt.Fprintf(w, "## Operators (issue 11): vkflow vs raw C Vulkan and NumPy\n\n")
	fmt.Fprintf(w, "%s · %s · %s\n\n", date, orDash(res.cpu), orDash(res.device))
	fmt.Fprintf(w, "| comparison | vkflow | vkflow ns/op | baseline | baseline ns/op | vkflow/baseline | per round: median (min–max) | goal | verdict |\n")
	fmt.Fprintf(w, "|---|---:|---:|---:|---:|---:|---:|---|---|\n")
	for _, c := range comparisons {
		vf := res.side("Ops", c.vkflow, c.vfAmount)
		b := res.side(c.baseSide, c.base, c.bAmount)
		ratio, verdict := "—", "—"
		switch {
		case vf.n == 0:
			verdict = "**MISSING** (no vkflow result)"
		case b.n == 0:
			verdict = "no baseline result"
		default:
			r := vf.figure / b.figure
			ratio = strconv.FormatFloat(r, 'f', 2, 64) + "x"
			switch {
			case c.goal == 0:
				verdict = "reported"
			case r >= c.goal:
				verdict = "**MET**"
			default:
				verdict = "**NOT MET**"
			}
		}
		rounds := "—"
		if med, lo, hi, ok := res.paired(c); ok {
			rounds = fmt.Sprintf("%.2fx (%.2f–%.2f)", med, lo, hi)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c.what,
			fmtFig(vf, c.unit), fmtNs(vf), fmtFig(b, c.unit), fmtNs(b), ratio, rounds, c.goalLabel, verdict)
	}
	fmt.Fprintf(w, "\nBytes counted: add 12 per element (a and b read, out written), both sides; "+
		"sum 4 per element (the input read); copy 8 per element (read + write). "+
		"GFLOP/s: 2·n³ per matmul. Each figure is at the median ns/op of all runs "+
		"(C: the median of 5 batches per run; vkflow: the median Run of each run); the verdict is on that ratio. "+
		"Per round: the ratio within each round (the two sides run seconds apart), "+
		"its median and range over the rounds, a check on the machine's noise. The control rows run C's own shader through "+
		"ops.Register + op.Run: the gap to C there is the Op machinery's, not the kernel's.\n")
	var labels []string
	for l := range res.numpy {
		labels = append(labels, l)
	}
	slices.Sort(labels)
	for _, l := range labels {
		fmt.Fprintf(w, "\nNumPy (%s): %s.", l, res.numpy[l])
	}
	if len(labels) > 0 {
		fmt.Fprintln(w)
	}
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func main() {
	deviceLog := flag.String("device-log", "", "file holding the C side's stderr (device line)")
	date := flag.String("date", time.Now().UTC().Format("2006-01-02 15:04 UTC"), "date shown in the header")
	flag.Parse()
	res := newResults()
	if *deviceLog != "" {
		f, err := os.Open(*deviceLog)
		if err != nil {
			fmt.Fprintln(os.Stderr, "opsreport:", err)
			os.Exit(1)
		}
		err = res.parse(f)
		f.Close()
		if err != nil {
			fmt.Fprintln(os.Stderr, "opsreport:", err)
			os.Exit(1)
		}
	}
	if err := res.parse(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "opsreport:", err)
		os.Exit(1)
	}
	render(os.Stdout, res, *date)
}
