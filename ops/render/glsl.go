package render

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// GLSL of the soft rasterizer. Buffers are flat arrays of the work type
// (float or double): tri [N, 3, 2], rgba [N, 4], images [H, W, 4].
//
// The rasterizer's kernels are compiled per layer size (COUNT triangles):
// each invocation first copies its layer's triangles into private arrays
// (vertices, colour, culling box) and then renders its pixels, NT
// invocations apart (consecutive invocations, consecutive pixels). On a
// CPU device (lavapipe) an invocation takes several pixels, so that the
// buffer loads, which are gathers there, are paid once per several
// pixels; on a GPU, one pixel each.

// localSize is the workgroup size of every kernel here.
const localSize = 64

// backwardThreads is how many invocations rasterBackward aims at: each
// sums its share of the pixels, and rasterReduce adds their sums. (A
// variable for the tests' mutation check.)
var backwardThreads uint64 = 4096

// cpuPixels is how many pixels an invocation of rasterSource renders on a
// CPU device.
const cpuPixels = 16

// types returns the GLSL scalar, vec2 and vec4 types of dt, and the
// sigmoid of its precision.
func types(dt tensor.Dtype) (t, v2, v4, sigmoid string) {
	if dt == tensor.Float64 {
		return "double", "dvec2", "dvec4", "sigmoidD"
	}
	return "float", "vec2", "vec4", "sigmoidFast"
}

// header opens a kernel over dt: version, local size, gid(), the sigmoid.
func header(dt tensor.Dtype) string {
	// float32: the driver's exp, whose error (up to some tens of ULPs on
	// lavapipe) moves the coverage by far less than float32's tolerance
	// of the render; float64 has no exp in GLSL: opcore's.
	math := sigmoidFast
	if dt == tensor.Float64 {
		math = opcore.MathF64
	}
	return fmt.Sprintf("#version 450\nlayout(local_size_x = %d) in;\n%s%s", localSize, opcore.IndexGLSL, math)
}

// sigmoidFast is the float32 sigmoid, without branches: exp(-x) is
// infinite for x below about -88, which gives 0.
const sigmoidFast = `float sigmoidFast(float x) { return 1.0 / (1.0 + exp(-x)); }
`

// layerGLSL holds the layer's triangles (loadLayer copies them from the
// buffers), the signed distance of the formula and its gradient:
// geom(p, k) returns d for pixel centre p and the layer's triangle k, and
// sets e (the nearest edge, from vertex e to vertex e+1 mod 3; the first
// of equals), s (the segment parameter of the nearest point) and w (dd/dv_e
// is (1-s) w, dd/dv_{e+1} is s w; zero where d is 0).
//
// far(p, k) is true where p lies more than CULL sigma outside triangle k's
// bounding box: there d < -CULL sigma, so its coverage there is below
// sigmoid(-CULL) (4e-18 for float64's CULL of 40, 4e-11 for float32's 24,
// far below half an ULP of 1), and the kernels take it as 0: they skip
// the triangle.
const layerGLSL = `
V2 P0[COUNT];
V2 P1[COUNT];
V2 P2[COUNT];
V4 COL[COUNT];
V2 LO[COUNT];
V2 HI[COUNT];

void loadLayer(uint start, T margin) {
	for (uint k = 0; k < COUNT; k++) {
		uint t = start + k;
		P0[k] = V2(tri[t * 6], tri[t * 6 + 1]);
		P1[k] = V2(tri[t * 6 + 2], tri[t * 6 + 3]);
		P2[k] = V2(tri[t * 6 + 4], tri[t * 6 + 5]);
		COL[k] = V4(rgba[t * 4], rgba[t * 4 + 1], rgba[t * 4 + 2], rgba[t * 4 + 3]);
		LO[k] = min(min(P0[k], P1[k]), P2[k]) - margin;
		HI[k] = max(max(P0[k], P1[k]), P2[k]) + margin;
	}
}

bool far(V2 p, uint k) {
	return p.x < LO[k].x || p.y < LO[k].y || p.x > HI[k].x || p.y > HI[k].y;
}

T cross2(V2 a, V2 b) { return a.x * b.y - a.y * b.x; }

// edge updates the nearest point so far with segment a-b (edge k).
void edge(V2 p, V2 a, V2 b, uint k, inout T best, inout V2 diff, inout uint e, inout T s) {
	V2 ab = b - a;
	V2 pa = p - a;
	T l2 = dot(ab, ab);
	T sk = l2 > T(0) ? clamp(dot(pa, ab) / l2, T(0), T(1)) : T(0);
	V2 q = pa - sk * ab;
	T dk = dot(q, q);
	if (k == 0 || dk < best) {
		best = dk;
		diff = q;
		e = k;
		s = sk;
	}
}

T geom(V2 p, uint k, out uint e, out T s, out V2 w) {
	V2 v0 = P0[k];
	V2 v1 = P1[k];
	V2 v2 = P2[k];
	T best = T(0);
	V2 diff = V2(0);
	e = 0;
	s = T(0);
	edge(p, v0, v1, 0, best, diff, e, s);
	edge(p, v1, v2, 1, best, diff, e, s);
	edge(p, v2, v0, 2, best, diff, e, s);
	T w0 = cross2(v1 - v0, p - v0);
	T w1 = cross2(v2 - v1, p - v1);
	T w2 = cross2(v0 - v2, p - v2);
	best = sqrt(best);
	bool inside = (w0 >= T(0) && w1 >= T(0) && w2 >= T(0)) || (w0 <= T(0) && w1 <= T(0) && w2 <= T(0));
	T sgn = inside ? T(1) : T(-1);
	// d = sgn |p - q|: dd/dq = -sgn (p - q)/|p - q|, and q moves with the
	// edge's ends as (1 - s) and s (s's own change costs nothing at the
	// minimum).
	w = best > T(0) ? -sgn * diff / best : V2(0);
	return sgn * best;
}
`

// cull is CULL of geomGLSL for dt.
func cull(dt tensor.Dtype) string {
	if dt == tensor.Float64 {
		return "#define CULL 40.0\n"
	}
	return "#define CULL 24.0\n"
}

// scalarT is T alone (a word): the scalar type in typed's sources.
var scalarT = regexp.MustCompile(`\bT\b`)

// typed replaces T, V2, V4 and SIGMOID in src by dt's GLSL types and
// sigmoid.
func typed(dt tensor.Dtype, src string) string {
	t, v2, v4, sig := types(dt)
	src = strings.NewReplacer("V2", v2, "V4", v4, "SIGMOID", sig).Replace(src)
	return scalarT.ReplaceAllLiteralString(src, t)
}

// rasterSource composites the layer's COUNT triangles (start ..
// start+COUNT-1) over a transparent layer.
func rasterSource(dt tensor.Dtype, count int) string {
	return header(dt) + cull(dt) + fmt.Sprintf("#define COUNT %du\n", max(count, 1)) + typed(dt, `
layout(std430, binding = 0) readonly buffer Tri { T tri[]; };
layout(std430, binding = 1) readonly buffer Rgba { T rgba[]; };
layout(std430, binding = 2) writeonly buffer Layer { T layer[]; };
layout(push_constant) uniform Push { T sigma; uint W; uint H; uint start; uint count; uint nt; } pc;
`+layerGLSL+`
void main() {
	uint inv = gid();
	if (inv >= pc.nt) {
		return;
	}
	if (pc.count == 0) { // no triangles: a transparent layer
		for (uint i = inv; i < pc.W * pc.H; i += pc.nt) {
			for (uint c = 0; c < 4; c++) {
				layer[i * 4 + c] = T(0);
			}
		}
		return;
	}
	loadLayer(pc.start, T(CULL) * pc.sigma);
	for (uint i = inv; i < pc.W * pc.H; i += pc.nt) {
		V2 p = V2(T(i % pc.W) + T(0.5), T(i / pc.W) + T(0.5));
		V4 S = V4(0);
		for (uint k = 0; k < COUNT; k++) {
			if (far(p, k)) {
				continue;
			}
			uint e;
			T s;
			V2 w;
			T d = geom(p, k, e, s, w);
			T A = COL[k].a * SIGMOID(d / pc.sigma);
			S = V4(COL[k].rgb, T(1)) * A + S * (T(1) - A);
		}
		for (uint c = 0; c < 4; c++) {
			layer[i * 4 + c] = S[c];
		}
	}
}
`)
}

// overSource writes src over dst (premultiplied RGBA) into out, per pixel.
func overSource(dt tensor.Dtype) string {
	return header(dt) + typed(dt, `
layout(std430, binding = 0) readonly buffer Src { T src[]; };
layout(std430, binding = 1) readonly buffer Dst { T dst[]; };
layout(std430, binding = 2) writeonly buffer Out { T outp[]; };
layout(push_constant) uniform Push { uint n; } pc;

void main() {
	uint i = gid();
	if (i >= pc.n) {
		return;
	}
	T k = T(1) - src[i * 4 + 3];
	V4 o;
	for (uint c = 0; c < 4; c++) {
		o[c] = src[i * 4 + c] + dst[i * 4 + c] * k;
	}
	for (uint c = 0; c < 4; c++) {
		outp[i * 4 + c] = o[c];
	}
}
`)
}

// overBackwardSource is over's VJP per pixel: out = src + dst (1 - src.a),
// so gdst = g (1 - src.a), gsrc.rgb = g.rgb, gsrc.a = g.a - g . dst.
func overBackwardSource(dt tensor.Dtype) string {
	return header(dt) + typed(dt, `
layout(std430, binding = 0) readonly buffer G { T g[]; };
layout(std430, binding = 1) readonly buffer Src { T src[]; };
layout(std430, binding = 2) readonly buffer Dst { T dst[]; };
layout(std430, binding = 3) writeonly buffer GSrc { T gsrc[]; };
layout(std430, binding = 4) writeonly buffer GDst { T gdst[]; };
layout(push_constant) uniform Push { uint n; } pc;

void main() {
	uint i = gid();
	if (i >= pc.n) {
		return;
	}
	V4 gv = V4(g[i * 4], g[i * 4 + 1], g[i * 4 + 2], g[i * 4 + 3]);
	V4 dv = V4(dst[i * 4], dst[i * 4 + 1], dst[i * 4 + 2], dst[i * 4 + 3]);
	T k = T(1) - src[i * 4 + 3];
	V4 gs = V4(gv.rgb, gv.a - dot(gv, dv));
	V4 gd = gv * k;
	for (uint c = 0; c < 4; c++) {
		gsrc[i * 4 + c] = gs[c];
		gdst[i * 4 + c] = gd[c];
	}
}
`)
}

// rasterBackwardSource is the first half of the rasterizer's VJP for a
// layer of COUNT triangles: invocation g sums, over its pixels (g, g + NT,
// g + 2 NT, ... for NT invocations), every triangle's 10 partials (dL/d of
// its 6 vertex coordinates and its rgba) of the layer's cotangent gl, in
// pixel order, and writes them to part[g][triangle][10]; rasterReduce adds
// the invocations' sums in order. Nothing is atomic, nothing depends on
// timing: the result is the same bits at every run. (No shared memory and
// no barrier either: on lavapipe a kernel with a barrier runs as
// coroutines whose frames hold these arrays, several times slower.)
//
// Per pixel, with S_k the layer after triangle k (S_-1 transparent) and
// T_k = prod_{j>k} (1 - A_j) its transmittance to the top of the layer:
// dL/dS_k = gl T_k, so dA_k = (gl T_k) . (c_k - S_{k-1}.rgb, 1 - S_{k-1}.a)
// and dc_k = gl.rgb T_k A_k. The first loop goes up the layer saving A_k,
// D_k, S_{k-1} and the distance's gradient; the second comes down with T.
func rasterBackwardSource(dt tensor.Dtype, count int) string {
	return header(dt) + cull(dt) + fmt.Sprintf("#define COUNT %du\n", count) + typed(dt, `
layout(std430, binding = 0) readonly buffer Tri { T tri[]; };
layout(std430, binding = 1) readonly buffer Rgba { T rgba[]; };
layout(std430, binding = 2) readonly buffer G { T g[]; };
layout(std430, binding = 3) writeonly buffer Part { T part[]; };
layout(push_constant) uniform Push { T sigma; uint W; uint H; uint start; uint nt; } pc;
`+layerGLSL+`
void main() {
	uint inv = gid();
	if (inv >= pc.nt) {
		return;
	}
	T acc[COUNT * 10];
	for (uint j = 0; j < COUNT * 10; j++) {
		acc[j] = T(0);
	}
	T A[COUNT];
	T D[COUNT];
	V4 Sp[COUNT];
	uint E[COUNT];
	T Sk[COUNT];
	V2 Wk[COUNT];
	loadLayer(pc.start, T(CULL) * pc.sigma);
	for (uint i = inv; i < pc.W * pc.H; i += pc.nt) {
		V2 p = V2(T(i % pc.W) + T(0.5), T(i / pc.W) + T(0.5));
		V4 S = V4(0);
		for (uint k = 0; k < COUNT; k++) {
			A[k] = T(0);
			D[k] = T(0);
			Sp[k] = S;
			if (far(p, k)) {
				continue;
			}
			T d = geom(p, k, E[k], Sk[k], Wk[k]);
			D[k] = SIGMOID(d / pc.sigma);
			A[k] = COL[k].a * D[k];
			S = V4(COL[k].rgb, T(1)) * A[k] + S * (T(1) - A[k]);
		}
		V4 gl = V4(g[i * 4], g[i * 4 + 1], g[i * 4 + 2], g[i * 4 + 3]);
		T trans = T(1);
		for (uint kk = COUNT; kk > 0; kk--) {
			uint k = kk - 1;
			if (D[k] == T(0)) {
				continue; // far (or no coverage): no gradient, and A_k is 0
			}
			V4 gS = gl * trans;
			T dA = dot(gS.rgb, COL[k].rgb - Sp[k].rgb) + gS.a * (T(1) - Sp[k].a);
			uint b = k * 10;
			acc[b + 6] += gS.r * A[k];
			acc[b + 7] += gS.g * A[k];
			acc[b + 8] += gS.b * A[k];
			acc[b + 9] += dA * D[k];
			T dd = dA * COL[k].a * D[k] * (T(1) - D[k]) / pc.sigma;
			// Vertex j's share of the nearest point: 1 - s for the edge's
			// start, s for its end (selects, not an index that differs
			// between invocations: that would be a gather).
			uint e = E[k];
			T s = Sk[k];
			V2 gw = dd * Wk[k];
			T c0 = e == 0 ? T(1) - s : (e == 2 ? s : T(0));
			T c1 = e == 1 ? T(1) - s : (e == 0 ? s : T(0));
			T c2 = e == 2 ? T(1) - s : (e == 1 ? s : T(0));
			acc[b] += c0 * gw.x;
			acc[b + 1] += c0 * gw.y;
			acc[b + 2] += c1 * gw.x;
			acc[b + 3] += c1 * gw.y;
			acc[b + 4] += c2 * gw.x;
			acc[b + 5] += c2 * gw.y;
			trans *= T(1) - A[k];
		}
	}
	for (uint j = 0; j < COUNT * 10; j++) {
		part[inv * COUNT * 10 + j] = acc[j];
	}
}
`)
}

// rasterReduceSource adds the invocations' sums of rasterBackward into
// the gradients of all N triangles: gtri [N, 3, 2] and grgba [N, 4], zero
// for the triangles outside the layer. One invocation per value, the sums
// in order.
func rasterReduceSource(dt tensor.Dtype) string {
	return header(dt) + typed(dt, `
layout(std430, binding = 0) readonly buffer Part { T part[]; };
layout(std430, binding = 1) writeonly buffer GTri { T gtri[]; };
layout(std430, binding = 2) writeonly buffer GRgba { T grgba[]; };
layout(push_constant) uniform Push { uint n; uint start; uint count; uint nt; } pc;

void main() {
	uint i = gid();
	if (i >= pc.n * 10) {
		return;
	}
	uint t = i / 10;
	uint j = i % 10;
	T sum = T(0);
	if (t >= pc.start && t < pc.start + pc.count) {
		uint k = t - pc.start;
		for (uint inv = 0; inv < pc.nt; inv++) {
			sum += part[(inv * pc.count + k) * 10 + j];
		}
	}
	if (j < 6) {
		gtri[t * 6 + j] = sum;
	} else {
		grgba[t * 4 + j - 6] = sum;
	}
}
`)
}
