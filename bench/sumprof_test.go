package bench

// TestSumFirstPassProfile is the experiment behind docs/BENCHMARKS.md
// ("Operators", "Where the time goes"): ops "sum" over 16Mi floats
// alternated in one process with hand-written first passes registered as
// user kernels, which differ from it in one thing at a time. It only logs
// medians; it runs when VKFLOW_OPSPROF=1:
//
//	VKFLOW_OPSPROF=1 go test ./bench -run TestSumFirstPassProfile -v

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// sumPassHead declares the output and the workgroup's combine: a
// subgroup sum, then the first subgroup sums the subgroups' results.
const sumPassHead = `#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 256) in;
layout(binding = 2) writeonly buffer Y { float y[]; };
shared float sh[256];
void finish(float acc) {
	acc = subgroupAdd(acc);
	if (subgroupElect()) sh[gl_SubgroupID] = acc;
	barrier();
	if (gl_SubgroupID == 0u) {
		acc = 0.0;
		for (uint k = gl_SubgroupInvocationID; k < gl_NumSubgroups; k += gl_SubgroupSize) acc += sh[k];
		acc = subgroupAdd(acc);
		if (subgroupElect()) y[gl_WorkGroupID.x] = acc;
	}
}
`

// sumPass returns a first pass in which each of 256 lanes reads vecs
// vec4s, strided by the workgroup: with one vec4 accumulator and the
// scalar tail after the loop, or (split) with four float accumulators and
// the tail inside the loop. The
// input is bound twice, as vec4s (binding 0) and as floats (1, the tail's);
// binding 2 takes one partial sum per workgroup.
func sumPass(vecs int, split bool) string {
	body := `	vec4 acc = vec4(0.0);
	for (uint i = 0u; i < VECS; i++) {
		uint r = base + i * 256u;
		if (r < x.length()) acc += x[r];
	}
	if (gl_GlobalInvocationID.x == 0u) { // the tail past the last vec4
		for (uint r = x.length() * 4u; r < xs.length(); r++) acc.x += xs[r];
	}
	finish((acc.x + acc.y) + (acc.z + acc.w));
`
	if split {
		body = `	uint n = x.length() * 4u;
	float a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
	for (uint i = 0u; i < VECS; i++) {
		uint r = (base + i * 256u) * 4u;
		if (r + 3u < n) {
			vec4 v = x[r >> 2];
			a0 += v.x; a1 += v.y; a2 += v.z; a3 += v.w;
		} else {
			if (r < n) a0 += xs[r];
			if (r + 1u < n) a1 += xs[r + 1u];
			if (r + 2u < n) a2 += xs[r + 2u];
		}
	}
	finish((a0 + a1) + (a2 + a3));
`
	}
	return sumPassHead + fmt.Sprintf(`const uint VECS = %du;
layout(binding = 0) readonly buffer X { vec4 x[]; };
layout(binding = 1) readonly buffer XS { float xs[]; };
void main() {
	uint base = gl_WorkGroupID.x * VECS * 256u + gl_LocalInvocationID.x;
%s}
`, vecs, body)
}

func TestSumFirstPassProfile(t *testing.T) {
	if os.Getenv("VKFLOW_OPSPROF") != "1" {
		t.Skip("set VKFLOW_OPSPROF=1 to run this profile")
	}
	if !hasOp("sum") {
		t.Skip("missing: no op named \"sum\"")
	}
	m := openBench(&testing.B{})
	defer m.Close()
	const n = 16 << 20
	e, err := newSumEnv(m, n)
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	x := e.op.Inputs()[0]
	if err := e.op.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.verify(); err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		name string
		op   *ops.Op
	}{{"ops sum (all passes)", e.op}}
	for _, v := range []struct {
		name  string
		vecs  int
		split bool
	}{
		{"16 vec4/lane, 4 float acc + tail in loop", 16, true},
		{"16 vec4/lane, vec4 acc", 16, false},
		{"8 vec4/lane, vec4 acc", 8, false},
		{"2 vec4/lane, vec4 acc", 2, false},
	} {
		name := fmt.Sprintf("bench.sumpass_%d_%v", v.vecs, v.split)
		if !hasOp(name) {
			if err := ops.Register(name, ops.Kernel{GLSL: sumPass(v.vecs, v.split), Inputs: 2}); err != nil {
				t.Fatal(err)
			}
		}
		groups := n / 4 / 256 / v.vecs
		out, err := tensor.New(m, tensor.Float32, []int{groups})
		if err != nil {
			t.Fatal(err)
		}
		defer out.Close()
		op, err := ops.Prepare(m, name, []*tensor.Tensor{x, x}, []*tensor.Tensor{out},
			ops.Attrs{Groups: [3]uint32{uint32(groups), 1, 1}})
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		if err := op.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		parts, err := out.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		var got float64
		for _, p := range parts {
			got += float64(p)
		}
		want, err := e.op.Out().Float32s() // newSumEnv verified it
		if err != nil {
			t.Fatal(err)
		}
		if got != float64(want[0]) {
			t.Fatalf("%s: partial sums add up to %v, want %v", v.name, got, want[0])
		}
		runs = append(runs, struct {
			name string
			op   *ops.Op
		}{fmt.Sprintf("%s (%d workgroups)", v.name, groups), op})
	}
	ctx := context.Background()
	times := make([][]float64, len(runs))
	for round := range 21 {
		for i, r := range runs {
			t0 := time.Now()
			if err := r.op.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if round > 0 { // the first round warms up
				times[i] = append(times[i], float64(time.Since(t0).Microseconds()))
			}
		}
	}
	for i, r := range runs {
		slices.Sort(times[i])
		med := times[i][len(times[i])/2]
		t.Logf("%-55s median %8.0f µs  %5.2f GB/s read", r.name, med, 4*n/med/1e3)
	}
}
