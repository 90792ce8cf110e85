package opcore

import (
	"fmt"
	"math"
	"strings"

	"github.com/vkflow/vkflow/graph"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// LogRegMaxFeatures is the most features LogRegStep takes. Past it, the
// loops of one invocation would near lavapipe's cap of 65535 iterations
// (about 2d per step).
const LogRegMaxFeatures = 16384

// logRegPerInvocation returns how many samples each of the 256
// invocations of the first pass takes for d features: 8 up to 128
// features, fewer past, so the loops of one invocation stay under
// lavapipe's cap, about 1024 iterations per 256·R samples.
func logRegPerInvocation(d int) int {
	return max(1, min(8, 1024/d))
}

// LogReg is one full-batch gradient-descent step of logistic regression
// on float32 data, as two dispatches. In the first, each workgroup takes
// 256·R samples (R = 8 up to 128 features, 1024/d past it): an invocation
// per sample (R of them each) computes its prediction error and loss,
// then the workgroup sums error × feature over its samples for
// every feature (blocks of up to 256 features, each summed over slices of
// the samples and a tree), and writes the d gradient sums, the bias
// gradient and the loss to its slot of a scratch buffer (up to 16
// features, an invocation keeps the sums of its samples in registers
// instead, and the workgroup adds them four at a time). In the second,
// one workgroup per weight (and one for the bias, one for the loss) adds
// that column over every slot and updates it. No loop grows with the
// sample count beyond slots/256 in the second pass.
type LogReg struct {
	op                 *Op
	m, d, groups, rows int
}

// LogRegStep prepares training steps: x is m×d (row-major, 1 <= d <=
// LogRegMaxFeatures), y holds the m labels (0 or 1), w the d weights and b
// the one bias, both updated in place by each step; loss receives the mean
// cross-entropy under the weights before the step. All are float32; x
// must fit one storage-buffer binding. Record or AddTo records steps;
// Close frees the pipelines and the scratch buffer.
func LogRegStep(o Owner, x, y, w, b, loss *tensor.Tensor) (*LogReg, error) {
	op, err := NewOp(o, "logreg", x, y, w, b, loss)
	if err != nil {
		return nil, err
	}
	l := &LogReg{op: op}
	if _, err := op.Done(l.build(x, y, w, b, loss)); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *LogReg) build(x, y, w, b, loss *tensor.Tensor) error {
	op := l.op
	for i, t := range []*tensor.Tensor{x, y, w, b, loss} {
		if t.Dtype() != tensor.Float32 {
			return op.Errorf("mismatched dtypes: tensor %d is %v, want float32", i, t.Dtype())
		}
	}
	m, d := y.Len(), w.Len()
	limit := uint64(op.dev.Info.Limits.MaxStorageBufferRange)
	switch {
	case d < 1 || d > LogRegMaxFeatures:
		return op.Errorf("%d features, want 1 to %d", d, LogRegMaxFeatures)
	case m < 1:
		return op.Errorf("no samples")
	case x.Len() != m*d:
		return op.Errorf("size mismatch: x has %d elements, want m*d = %d*%d", x.Len(), m, d)
	case b.Len() != 1 || loss.Len() != 1:
		return op.Errorf("b and loss must have one element")
	case uint64(m)*uint64(d)*4 > limit || m > math.MaxUint32:
		return op.Errorf("x of %d×%d floats exceeds maxStorageBufferRange (%d bytes)", m, d, limit)
	}
	for _, t := range []*tensor.Tensor{w, b, loss} {
		if t.ReadOnly() {
			return op.Errorf("w, b and loss must be writable")
		}
	}
	op.outs = append(op.outs, w, b, loss)
	for i, t := range op.ins[:2] {
		for _, o := range op.outs {
			if t.Allocation() == o.Allocation() {
				return op.Errorf("input %d shares memory with w, b or loss", i)
			}
		}
	}
	l.m, l.d = m, d
	l.rows = 256 * logRegPerInvocation(d)
	l.groups = (m + l.rows - 1) / l.rows
	part, err := op.Temp(tensor.Float32, []int{l.groups * (d + 2)})
	if err != nil {
		return err
	}
	groups, err := op.Grid(uint64(l.groups)*256, 256)
	if err != nil {
		return err
	}
	grad := logRegGradGLSL(d)
	if d <= logRegSmall {
		grad = logRegGradSmallGLSL(d)
	}
	if err := op.Dispatch(grad, []*tensor.Tensor{x, y, w, b, part}, groups, uint32(m), uint32(l.groups)); err != nil {
		return err
	}
	return op.Dispatch(logRegUpdateGLSL(d), []*tensor.Tensor{part, w, b, loss}, [3]uint32{uint32(d + 2), 1, 1}, uint32(m), uint32(l.groups), float32(0))
}

// Record appends one step with learning rate lr to s: the two dispatches.
// It returns s for chaining; errors stick to s as for any recording.
func (l *LogReg) Record(s *sequence.Sequence, lr float32) *sequence.Sequence {
	if s == nil || l == nil {
		return s
	}
	st := l.op.steps
	return s.Dispatch(st[0].alg, st[0].push...).Dispatch(st[1].alg, uint32(l.m), uint32(l.groups), lr)
}

// AddTo appends one step with learning rate lr to g as two nodes,
// "logreg/1" and "logreg/2", and returns the second.
func (l *LogReg) AddTo(g *graph.Graph, lr float32) graph.Node {
	var last graph.Node
	if g == nil || l == nil {
		return last
	}
	st := l.op.steps
	g.Dispatch(st[0].alg, st[0].push...).Named("logreg/1")
	return g.Dispatch(st[1].alg, uint32(l.m), uint32(l.groups), lr).Named("logreg/2")
}

// Groups returns how many workgroups the first dispatch runs: one per
// 256·R samples.
func (l *LogReg) Groups() int { return l.groups }

// Close releases the pipelines and the scratch buffer; sequences and
// graphs that recorded steps keep them alive until they are done.
// Idempotent; nil is a no-op.
func (l *LogReg) Close() error {
	if l == nil {
		return nil
	}
	return l.op.Close()
}

// logRegReduce defines reduce(v) for values of GLSL type t: the sum of v
// over the workgroup's 256 invocations, returned to all; called in uniform
// control flow, it ends with a barrier so red can be reused.
func logRegReduce(t string) string {
	return fmt.Sprintf(`shared %[1]s red[256];
%[1]s reduce(%[1]s v) {
	uint tid = gl_LocalInvocationIndex;
	red[tid] = v;
	barrier();
	for (uint s = 128u; s > 0u; s >>= 1) {
		if (tid < s) {
			red[tid] += red[tid + s];
		}
		barrier();
	}
	%[1]s t = red[0];
	barrier();
	return t;
}
`, t)
}

// logRegReduceGLSL is reduce over floats.
var logRegReduceGLSL = logRegReduce("float")

// logRegGradGLSL is the first pass for d features. FB features are summed
// at a time, each over S slices of the workgroup's samples (FB·S = 256).
func logRegGradGLSL(d int) string {
	fb := 1
	for fb < d && fb < 256 {
		fb *= 2
	}
	return fmt.Sprintf(`#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) readonly buffer W { float w[]; };
layout(std430, binding = 3) readonly buffer Bias { float b[]; };
layout(std430, binding = 4) writeonly buffer Part { float part[]; };
layout(push_constant) uniform P { uint m, groups; } p;
const uint D = %[1]du, FB = %[2]du, S = %[3]du, R = %[5]du, ROWS = 256u * R, STRIDE = D + 2u;
shared float diff[ROWS];
%[4]s
void main() {
	uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (g >= p.groups) {
		return; // the whole workgroup
	}
	uint tid = gl_LocalInvocationIndex;
	uint row0 = g * ROWS;
	uint rows = min(ROWS, p.m - row0);
	float bias = b[0];
	float db = 0.0, l = 0.0;
	for (uint j = 0u; j < R; j++) {
		uint r = j * 256u + tid;
		float dv = 0.0;
		if (r < rows) {
			uint i = row0 + r;
			float z = bias;
			for (uint k = 0u; k < D; k++) {
				z += w[k] * x[i * D + k];
			}
			float prob = 1.0 / (1.0 + exp(-z));
			dv = prob - y[i];
			float pl = clamp(prob, 1e-7, 1.0 - 1e-7);
			l -= y[i] * log(pl) + (1.0 - y[i]) * log(1.0 - pl);
		}
		diff[r] = dv;
		db += dv;
	}
	barrier();
	uint f = tid %% FB, s = tid / FB;
	for (uint f0 = 0u; f0 < D; f0 += FB) {
		uint k = f0 + f;
		float acc = 0.0;
		if (k < D) {
			for (uint r = s; r < rows; r += S) {
				acc += diff[r] * x[(row0 + r) * D + k];
			}
		}
		red[tid] = acc;
		barrier();
		for (uint st = S / 2u; st > 0u; st >>= 1) {
			if (s < st) {
				red[tid] += red[tid + st * FB];
			}
			barrier();
		}
		if (s == 0u && k < D) {
			part[g * STRIDE + k] = red[f];
		}
		barrier();
	}
	float tb = reduce(db);
	float tl = reduce(l);
	if (tid == 0u) {
		part[g * STRIDE + D] = tb;
		part[g * STRIDE + D + 1u] = tl;
	}
}
`, d, fb, 256/fb, logRegReduceGLSL, logRegPerInvocation(d))
}

// logRegUpdateGLSL is the second pass: workgroup c sums column c of the
// slots and updates weight c (c < d), the bias (c = d) or the loss.
func logRegUpdateGLSL(d int) string {
	return fmt.Sprintf(`#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Part { float part[]; };
layout(std430, binding = 1) buffer W { float w[]; };
layout(std430, binding = 2) buffer Bias { float b[]; };
layout(std430, binding = 3) writeonly buffer Loss { float loss[]; };
layout(push_constant) uniform P { uint m, groups; float lr; } p;
const uint D = %[1]du, STRIDE = D + 2u;
%[2]s
void main() {
	uint c = gl_WorkGroupID.x;
	float v = 0.0;
	for (uint g = gl_LocalInvocationIndex; g < p.groups; g += 256u) {
		v += part[g * STRIDE + c];
	}
	float t = reduce(v);
	if (gl_LocalInvocationIndex == 0u) {
		float fm = float(p.m);
		float scale = p.lr / fm;
		if (c < D) {
			w[c] -= scale * t;
		} else if (c == D) {
			b[0] -= scale * t;
		} else {
			loss[0] = t / fm;
		}
	}
}
`, d, logRegReduceGLSL)
}

// logRegSmall is the most features logRegGradSmallGLSL takes.
const logRegSmall = 16

// logRegGradSmallGLSL is the first pass for d <= logRegSmall features:
// an invocation reads each of its samples once, keeps the d gradient sums,
// the bias gradient and the loss in registers, and the workgroup adds
// them four at a time in a tree of 4-vectors. The code is unrolled over
// the features.
func logRegGradSmallGLSL(d int) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	nv := (d + 2 + 3) / 4
	w(`#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Y { float y[]; };
layout(std430, binding = 2) readonly buffer W { float w[]; };
layout(std430, binding = 3) readonly buffer Bias { float b[]; };
layout(std430, binding = 4) writeonly buffer Part { float part[]; };
layout(push_constant) uniform P { uint m, groups; } p;
const uint D = %du, R = %du, ROWS = 256u * R, STRIDE = D + 2u;
%s
void main() {
	uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
	if (g >= p.groups) {
		return; // the whole workgroup
	}
	uint tid = gl_LocalInvocationIndex;
	uint row0 = g * ROWS;
	uint rows = min(ROWS, p.m - row0);
	float bias = b[0];
`, d, logRegPerInvocation(d), logRegReduce("vec4"))
	for k := range d {
		w("\tfloat w%d = w[%d];\n", k, k)
	}
	for k := range 4 * nv {
		w("\tfloat a%d = 0.0;\n", k)
	}
	w("\tfor (uint j = 0u; j < R; j++) {\n\t\tuint r = j * 256u + tid;\n\t\tif (r < rows) {\n")
	w("\t\t\tuint i = row0 + r, o = i * D;\n\t\t\tfloat z = bias;\n")
	for k := range d {
		w("\t\t\tfloat x%d = x[o + %du];\n\t\t\tz += w%d * x%d;\n", k, k, k, k)
	}
	w("\t\t\tfloat prob = 1.0 / (1.0 + exp(-z));\n\t\t\tfloat yi = y[i];\n\t\t\tfloat dv = prob - yi;\n")
	for k := range d {
		w("\t\t\ta%d += dv * x%d;\n", k, k)
	}
	w("\t\t\ta%d += dv;\n", d)
	w("\t\t\tfloat pl = clamp(prob, 1e-7, 1.0 - 1e-7);\n")
	w("\t\t\ta%d -= yi * log(pl) + (1.0 - yi) * log(1.0 - pl);\n", d+1)
	w("\t\t}\n\t}\n")
	for q := range nv {
		w("\t{\n\t\tvec4 t = reduce(vec4(a%d, a%d, a%d, a%d));\n\t\tif (tid == 0u) {\n", 4*q, 4*q+1, 4*q+2, 4*q+3)
		for c := range 4 {
			if k := 4*q + c; k < d+2 {
				w("\t\t\tpart[g * STRIDE + %du] = t.%c;\n", k, "xyzw"[c])
			}
		}
		w("\t\t}\n\t}\n")
	}
	w("}\n")
	return b.String()
}
