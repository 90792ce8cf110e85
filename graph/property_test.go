package graph_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// The property test: random graphs over a pool of float32 tensors, each
// compiled on one and on several logical queues (with pins, queue
// restrictions, small per-submit caps, After orders, whole copies as
// Opaque nodes, Host tensors, staged device memory), run several times,
// and every tensor and download compared bit for bit with a CPU model that
// runs the nodes one after another in recording order, which is what a
// graph means.
//
// Values stay integers below propBound, so every float32 sum and product
// is exact, and saxpy's alpha is a power of two, so a fused multiply-add
// rounds as the CPU's multiply then add. A run starts from the previous
// run's results: generation follows a bound of each tensor's magnitudes
// through every run and turns an operation that would pass propBound into
// a fill.
//
// propGraphs (property_size_test.go) is the number of graphs: a few dozen
// in the ordinary suite, thousands with -tags soak (make soak). A failure
// names the seed; propSeed(t, seed) replays one.
const (
	propBound = 1 << 22
	propRuns  = 3 // host graphs run propRuns times, others propRuns+1
	propBatch = 100
)

var propLens = []int{1000, 1024, 4099}

type propKind uint8

const (
	propAdd propKind = iota
	propMul
	propSaxpy
	propCopy
	propFill
	propUpload
	propDownload
)

var propKindNames = [...]string{"add", "mul", "saxpy", "copy", "fill", "upload", "download"}

// propOp is one node: t holds tensor indexes (add, mul: a, b, out; saxpy:
// x, y; copy: src, dst; the others: the tensor).
type propOp struct {
	kind    propKind
	t       [3]int
	alpha   float32
	v       float32
	regions []sequence.Region // copy: nil for the whole tensor
	host    int               // upload, download: index of its host slice
}

func (o propOp) String() string {
	switch o.kind {
	case propAdd, propMul:
		return fmt.Sprintf("%s(t%d, t%d -> t%d)", propKindNames[o.kind], o.t[0], o.t[1], o.t[2])
	case propSaxpy:
		return fmt.Sprintf("saxpy(t%d += %v*t%d)", o.t[1], o.alpha, o.t[0])
	case propCopy:
		return fmt.Sprintf("copy(t%d -> t%d, %v)", o.t[0], o.t[1], o.regions)
	case propFill:
		return fmt.Sprintf("fill(t%d, %v)", o.t[0], o.v)
	}
	return fmt.Sprintf("%s(t%d, host %d)", propKindNames[o.kind], o.t[0], o.host)
}

// propSpec is a random graph, independent of any Manager.
type propSpec struct {
	seed  uint64
	host  bool // has uploads and downloads: runs with Run, else RunAsync back to back
	lens  []int
	init  [][]float32
	ops   []propOp
	ups   int // upload host slices
	downs int

	schedule string   // of the last check's Exec
	edges    [][2]int // of the last check's Exec
}

func (s *propSpec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, host nodes %v, tensors %v\n", s.seed, s.host, s.lens)
	for i, o := range s.ops {
		fmt.Fprintf(&b, "  %d %v\n", i, o)
	}
	return b.String()
}

func smallInts(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.IntN(9) - 4)
	}
	return v
}

// genSpec makes the random graph of seed. bound tracks an upper bound of
// each tensor's magnitudes, from which operations that would leave exact
// float32 integers are refused.
func genSpec(seed uint64) *propSpec {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	s := &propSpec{seed: seed, host: r.IntN(2) == 0}
	nt := 6 + r.IntN(5)
	bound := make([]float64, nt)
	byLen := map[int][]int{}
	for i := range nt {
		n := propLens[r.IntN(len(propLens))]
		s.lens = append(s.lens, n)
		s.init = append(s.init, smallInts(r, n))
		bound[i] = 4
		byLen[n] = append(byLen[n], i)
	}
	same := func(i int) int { c := byLen[s.lens[i]]; return c[r.IntN(len(c))] }
	nops := 4 + r.IntN(36)
	for len(s.ops) < nops {
		var o propOp
		k := r.IntN(16)
		switch {
		case k < 3:
			o = propOp{kind: propAdd}
		case k < 5:
			o = propOp{kind: propMul}
		case k < 8:
			o = propOp{kind: propSaxpy}
		case k < 12:
			o = propOp{kind: propCopy}
		case k < 13 || !s.host:
			o = propOp{kind: propFill}
		case k < 14:
			o = propOp{kind: propUpload}
		default:
			o = propOp{kind: propDownload}
		}
		switch o.kind {
		case propAdd, propMul:
			a := r.IntN(nt)
			o.t = [3]int{a, same(a), same(a)}
			nb := bound[a] + bound[o.t[1]]
			if o.kind == propMul {
				nb = bound[a] * bound[o.t[1]]
			}
			if nb > propBound {
				continue
			}
			bound[o.t[2]] = nb
		case propSaxpy:
			x := r.IntN(nt)
			o.t = [3]int{x, same(x)}
			o.alpha = [...]float32{1, 2, -1, -2}[r.IntN(4)]
			nb := 2*bound[x] + bound[o.t[1]]
			if nb > propBound {
				continue
			}
			bound[o.t[1]] = nb
		case propCopy:
			src, dst := r.IntN(nt), r.IntN(nt)
			o.t = [3]int{src, dst}
			if src != dst && s.lens[src] == s.lens[dst] && r.IntN(5) == 0 {
				bound[dst] = bound[src] // a whole copy
			} else {
				o.regions = genRegions(r, s.lens[src], s.lens[dst], src == dst)
				bound[dst] = max(bound[dst], bound[src])
			}
		case propFill:
			o.t[0] = r.IntN(nt)
			o.v = float32(r.IntN(9) - 4)
			bound[o.t[0]] = 4
		case propUpload:
			o.t[0], o.host = r.IntN(nt), s.ups
			s.ups++
			bound[o.t[0]] = 4
		case propDownload:
			o.t[0], o.host = r.IntN(nt), s.downs
			s.downs++
		}
		s.ops = append(s.ops, o)
	}
	s.repair(r)
	if s.host && s.downs == 0 {
		i := r.IntN(nt)
		s.ops = append(s.ops, propOp{kind: propDownload, t: [3]int{i}, host: 0})
		s.downs++
	}
	return s
}

// repair follows a bound of each tensor's magnitudes through propRuns+1
// runs, each starting from the last one's results, and turns the first
// operation that would pass propBound into a fill of its output, until
// none does.
func (s *propSpec) repair(r *rand.Rand) {
	for {
		k := s.overflow()
		if k < 0 {
			return
		}
		o := s.ops[k]
		out := o.t[2]
		switch o.kind {
		case propSaxpy:
			out = o.t[1]
		case propCopy:
			out = o.t[1]
		}
		s.ops[k] = propOp{kind: propFill, t: [3]int{out}, v: float32(r.IntN(9) - 4)}
	}
}

// overflow returns the first operation whose result may pass propBound
// in one of propRuns+1 runs, or -1.
func (s *propSpec) overflow() int {
	bound := make([]float64, len(s.lens))
	for i := range bound {
		bound[i] = 4
	}
	for range propRuns + 1 {
		for k, o := range s.ops {
			switch o.kind {
			case propAdd:
				bound[o.t[2]] = bound[o.t[0]] + bound[o.t[1]]
			case propMul:
				bound[o.t[2]] = bound[o.t[0]] * bound[o.t[1]]
			case propSaxpy:
				bound[o.t[1]] += 2 * bound[o.t[0]]
			case propCopy:
				if o.regions == nil {
					bound[o.t[1]] = bound[o.t[0]]
				} else {
					bound[o.t[1]] = max(bound[o.t[1]], bound[o.t[0]])
				}
			case propFill, propUpload:
				bound[o.t[0]] = 4
			}
			for _, b := range bound {
				if b > propBound {
					return k
				}
			}
		}
	}
	return -1
}

// genRegions returns 1 to 3 copy regions that vkCmdCopyBuffer allows:
// destinations pairwise disjoint and, within one tensor, disjoint from
// every source. Some are a few elements long, some a third of the tensor.
func genRegions(r *rand.Rand, ns, nd int, same bool) []sequence.Region {
	var rs []sequence.Region
	over := func(a, n, b, m int) bool { return a < b+m && b < a+n }
	want := 1 + r.IntN(3)
	for try := 0; len(rs) < want && try < 20; try++ {
		n := 1 + r.IntN(8)
		if r.IntN(2) == 0 {
			n = 1 + r.IntN(min(ns, nd)/3)
		}
		q := sequence.Region{Src: r.IntN(ns - n + 1), Dst: r.IntN(nd - n + 1), Len: n}
		ok := !(same && over(q.Src, n, q.Dst, n))
		for _, p := range rs {
			if over(p.Dst, p.Len, q.Dst, n) || same && (over(p.Src, p.Len, q.Dst, n) || over(p.Dst, p.Len, q.Src, n)) {
				ok = false
			}
		}
		if ok {
			rs = append(rs, q)
		}
	}
	if len(rs) == 0 {
		// In one tensor of at least 1000 elements, two halves never meet.
		rs = []sequence.Region{{Src: 0, Dst: min(ns, nd) / 2, Len: 1}}
	}
	return rs
}

// model runs the graph's nodes one after another on the CPU, in float32.
func (s *propSpec) model(state, ups, downs [][]float32) {
	for _, o := range s.ops {
		switch o.kind {
		case propAdd:
			a, b, out := state[o.t[0]], state[o.t[1]], state[o.t[2]]
			for i := range out {
				out[i] = a[i] + b[i]
			}
		case propMul:
			a, b, out := state[o.t[0]], state[o.t[1]], state[o.t[2]]
			for i := range out {
				out[i] = a[i] * b[i]
			}
		case propSaxpy:
			x, y := state[o.t[0]], state[o.t[1]]
			for i := range y {
				y[i] = float32(o.alpha*x[i]) + y[i]
			}
		case propCopy:
			src, dst := state[o.t[0]], state[o.t[1]]
			if o.regions == nil {
				copy(dst, src)
			}
			for _, rg := range o.regions {
				copy(dst[rg.Dst:rg.Dst+rg.Len], src[rg.Src:rg.Src+rg.Len])
			}
		case propFill:
			for i := range state[o.t[0]] {
				state[o.t[0]][i] = o.v
			}
		case propUpload:
			copy(state[o.t[0]], ups[o.host])
		case propDownload:
			copy(downs[o.host], state[o.t[0]])
		}
	}
}

// propMgr is one Manager of the test with its algorithms, one per kernel
// and length, re-bound before each dispatch.
type propMgr struct {
	name     string
	m        *vkflow.Manager
	compute  int  // compute queues
	transfer bool // and a transfer queue after them
	algs     map[[2]int]*algorithm.Algorithm
}

func (pm *propMgr) alg(k propKind, ts ...*tensor.Tensor) (*algorithm.Algorithm, error) {
	key := [2]int{int(k), ts[0].Len()}
	if a := pm.algs[key]; a != nil {
		return a, a.Bind(ts...)
	}
	var a *algorithm.Algorithm
	var err error
	switch k {
	case propAdd:
		a, err = kernels.Add(pm.m, ts[0], ts[1], ts[2])
	case propMul:
		a, err = kernels.Multiply(pm.m, ts[0], ts[1], ts[2])
	default:
		a, err = kernels.Saxpy(pm.m, ts[0], ts[1])
	}
	if err != nil {
		return nil, err
	}
	pm.algs[key] = a
	return a, nil
}

// propVariant is one way to compile a graph. Its tensors are in Device
// memory, a quarter of them in Host memory.
type propVariant struct {
	name   string
	mgr    *propMgr
	queues []int // graph.Queues; nil for all
	pin    bool  // pin a third of the nodes to random allowed queues
	cut    bool  // small MaxNodesPerSubmit and MaxWorkPerSubmit
	after  bool  // order a sixth of the nodes After a random earlier node
	opaque bool  // record whole-tensor copies as Opaque nodes
}

func propManagers(t *testing.T) []*propMgr {
	open := func(name string, compute int, transfer bool) *propMgr {
		m, _ := testutil.Manager(t, vkflow.WithQueues(compute, transfer))
		return &propMgr{name: name, m: m, compute: compute, transfer: transfer, algs: map[[2]int]*algorithm.Algorithm{}}
	}
	ms := []*propMgr{open("1 queue", 1, false), open("2 queues", 2, false), open("2 queues + transfer", 2, true)}
	m, _ := testutil.Manager(t, vkflow.WithQueues(2, false), vkflow.WithStagedDeviceMemory())
	return append(ms, &propMgr{name: "2 queues, staged", m: m, compute: 2, algs: map[[2]int]*algorithm.Algorithm{}})
}

// propVariants lists the ways to compile a graph: the first two on one
// queue.
func propVariants(ms []*propMgr) []propVariant {
	one, two, three := ms[0], ms[1], ms[2]
	return []propVariant{
		{name: "1 queue", mgr: one},
		{name: "1 queue, cut, opaque copies, After", mgr: one, cut: true, opaque: true, after: true},
		{name: "2 queues", mgr: two},
		{name: "2 queues, pinned, opaque copies, After", mgr: two, pin: true, opaque: true, after: true},
		{name: "2 queues, pinned, cut", mgr: two, pin: true, cut: true},
		{name: "Queues(0,1) of 3", mgr: three, queues: []int{0, 1}, pin: true},
		{name: "3 queues with transfer, pinned, After", mgr: three, pin: true, after: true},
		{name: "Queues(1,2) of 3", mgr: three, queues: []int{1, 2}},
		{name: "2 queues, staged device memory, pinned", mgr: ms[3], pin: true},
	}
}

// check builds s on v's Manager, compiles it as v says, runs it propRuns
// times (and once more for graphs without host nodes, which first run back
// to back with RunAsync), and compares with the model after each. r
// drives the pins and caps.
func (s *propSpec) check(ctx context.Context, v propVariant, r *rand.Rand) (err error) {
	m := v.mgr.m
	ts := make([]*tensor.Tensor, len(s.lens))
	defer func() {
		for _, t := range ts {
			if t != nil {
				t.Close()
			}
		}
	}()
	state := make([][]float32, len(s.lens))
	for i := range ts {
		mem := tensor.Device
		if r.IntN(4) == 0 {
			mem = tensor.Host
		}
		if ts[i], err = tensor.New(m, tensor.Float32, []int{s.lens[i]}, tensor.In(mem)); err != nil {
			return err
		}
		if err := tensor.Write(ts[i], s.init[i]); err != nil {
			return err
		}
		state[i] = append([]float32(nil), s.init[i]...)
	}
	ups := make([][]float32, s.ups)
	downs := make([][]float32, s.downs)
	want := make([][]float32, s.downs)
	g, err := graph.New(m)
	if err != nil {
		return err
	}
	g.Input(ts...)
	allowed := v.queues
	if allowed == nil {
		for q := range v.mgr.compute + btoi(v.mgr.transfer) {
			allowed = append(allowed, q)
		}
	}
	var nodes []graph.Node
	for _, o := range s.ops {
		var n graph.Node
		dispatch := false
		switch o.kind {
		case propAdd, propMul, propSaxpy:
			in := []*tensor.Tensor{ts[o.t[0]], ts[o.t[1]], ts[o.t[2]]}
			if o.kind == propSaxpy {
				in = in[:2]
			}
			a, err := v.mgr.alg(o.kind, in...)
			if err != nil {
				return err
			}
			if o.kind == propSaxpy {
				n = g.Dispatch(a, o.alpha)
			} else {
				n = g.Dispatch(a)
			}
			dispatch = true
		case propCopy:
			src, dst := ts[o.t[0]], ts[o.t[1]]
			if v.opaque && o.regions == nil {
				sb, db, size := src.Allocation().Buffer, dst.Allocation().Buffer, src.Bytes()
				n = g.Opaque("copy", []*tensor.Tensor{src}, []*tensor.Tensor{dst}, func(cmd vk.CommandBuffer) {
					vk.CmdCopyBuffer(cmd, sb, db, []vk.CopyRegion{{Size: size}})
				})
				dispatch = true // opaque nodes need a compute queue
				break
			}
			n = g.Copy(src, dst, o.regions...)
		case propFill:
			n = g.Fill(ts[o.t[0]], o.v)
		case propUpload:
			ups[o.host] = make([]float32, s.lens[o.t[0]])
			n = g.Upload(ts[o.t[0]], ups[o.host])
		case propDownload:
			downs[o.host] = make([]float32, s.lens[o.t[0]])
			want[o.host] = make([]float32, s.lens[o.t[0]])
			n = g.Download(ts[o.t[0]], downs[o.host])
		}
		if v.after && len(nodes) > 0 && r.IntN(6) == 0 {
			n.After(nodes[r.IntN(len(nodes))])
		}
		nodes = append(nodes, n)
		if v.pin && r.IntN(3) == 0 {
			q := allowed[r.IntN(len(allowed))]
			if dispatch && v.mgr.transfer && q == v.mgr.compute {
				q = allowed[0] // the transfer queue takes no dispatch
			}
			n.OnQueue(q)
		}
	}
	var opts []graph.Option
	if v.queues != nil {
		opts = append(opts, graph.Queues(v.queues...))
	}
	if v.cut {
		opts = append(opts, graph.MaxNodesPerSubmit(1+r.IntN(4)), graph.MaxWorkPerSubmit(uint64(1+r.IntN(8192))))
	}
	e, err := g.Compile(opts...)
	if err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	defer e.Close()
	if err := graph.CheckSchedule(e); err != nil {
		return fmt.Errorf("schedule: %w\n%s", err, e.String())
	}
	s.schedule, s.edges = e.String(), graph.Edges(e)
	fail := func(run int, err error) error {
		return fmt.Errorf("run %d: %w\nschedule:\n%s", run, err, e.String())
	}
	compare := func(run int) error {
		for i, t := range ts {
			got, err := t.Float32s()
			if err != nil {
				return fail(run, err)
			}
			if err := sameBits(got, state[i]); err != nil {
				return fail(run, fmt.Errorf("tensor t%d: %w", i, err))
			}
		}
		for k := range downs {
			if err := sameBits(downs[k], want[k]); err != nil {
				return fail(run, fmt.Errorf("download %d: %w", k, err))
			}
		}
		return nil
	}
	if s.host {
		for run := range propRuns {
			for _, u := range ups {
				copy(u, smallInts(r, len(u)))
			}
			if err := e.Run(ctx); err != nil {
				return fail(run, err)
			}
			s.model(state, ups, want)
			if err := compare(run); err != nil {
				return err
			}
		}
		return e.Close()
	}
	ps := make([]graph.Pending, propRuns)
	for run := range ps {
		ps[run] = e.RunAsync()
	}
	for run, p := range ps {
		if err := p.Wait(ctx); err != nil {
			return fail(run, err)
		}
		s.model(state, ups, want)
	}
	if err := compare(propRuns - 1); err != nil {
		return err
	}
	if err := e.Run(ctx); err != nil {
		return fail(propRuns, err)
	}
	s.model(state, ups, want)
	if err := compare(propRuns); err != nil {
		return err
	}
	return e.Close()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sameBits(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d elements, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("element %d of %d is %v (bits %08x), the CPU model has %v (bits %08x)",
				i, len(got), got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return nil
}

// propSeed checks the graph of one seed in every variant.
func propSeed(t *testing.T, ctx context.Context, seed uint64, variants []propVariant) {
	t.Helper()
	s := genSpec(seed)
	for vi, v := range variants {
		r := rand.New(rand.NewPCG(seed, uint64(vi)))
		if err := s.check(ctx, v, r); err != nil {
			t.Fatalf("seed %d, variant %q: %v\ngraph:\n%v", seed, v.name, err, s)
		}
		if t.Failed() {
			// A validation message: it failed the test through the
			// Manager's hook, say which graph drew it.
			t.Fatalf("seed %d, variant %q drew a validation message\ngraph:\n%v\nschedule:\n%s", seed, v.name, s, s.schedule)
		}
	}
}

// TestGraphProperty checks propGraphs random graphs, seeds 1 to
// propGraphs; a failure names its seed, which then becomes a regression
// test (propSeed). Each graph runs in propVariantsPerGraph of the
// variants, chosen by its seed: one on one queue, the others on two or
// three.
func TestGraphProperty(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	start := time.Now()
	// Fresh Managers for every batch of propBatch graphs: the validation
	// layer's memory grows with every command buffer a device records.
	for first := uint64(1); first <= propGraphs; first += propBatch {
		last := min(first+propBatch-1, propGraphs)
		ok := t.Run(fmt.Sprintf("seeds %d-%d", first, last), func(t *testing.T) {
			vs := propVariants(propManagers(t))
			for seed := first; seed <= last; seed++ {
				pick := vs
				if propVariantsPerGraph < len(vs) {
					// One on one queue, the others on several.
					r := rand.New(rand.NewPCG(seed, 0x7a2))
					pick = []propVariant{vs[r.IntN(2)]}
					for _, k := range r.Perm(len(vs) - 2)[:propVariantsPerGraph-1] {
						pick = append(pick, vs[2+k])
					}
				}
				propSeed(t, ctx, seed, pick)
			}
		})
		if !ok {
			break
		}
	}
	t.Logf("%d graphs in %v", propGraphs, time.Since(start))
}

// The spec generator is deterministic and keeps its promises: regions
// valid, values exact over every run.
func TestGraphPropertySpec(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		s := genSpec(seed)
		require.Equal(t, s.String(), genSpec(seed).String())
		state := make([][]float32, len(s.init))
		for i := range state {
			state[i] = append([]float32(nil), s.init[i]...)
		}
		ups := make([][]float32, s.ups)
		r := rand.New(rand.NewPCG(seed, 1))
		for i, o := range s.ops {
			if o.kind == propUpload {
				ups[o.host] = smallInts(r, s.lens[o.t[0]])
			}
			if o.kind == propCopy && o.t[0] == o.t[1] {
				for _, p := range o.regions {
					for _, q := range o.regions {
						require.False(t, p.Dst < q.Src+q.Len && q.Src < p.Dst+p.Len, "seed %d op %d: regions overlap in one tensor", seed, i)
					}
				}
			}
		}
		downs := make([][]float32, s.downs)
		for k := range downs {
			downs[k] = make([]float32, 4099)
		}
		for range propRuns + 1 {
			s.model(state, ups, downs)
			for i, v := range state {
				for k, x := range v {
					if math.Abs(float64(x)) > propBound {
						t.Fatalf("seed %d: tensor %d element %d is %v after a run, above %d", seed, i, k, x, propBound)
					}
				}
			}
		}
	}
}
