package linalg

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// The resumable kernels of eig (see eig.go): balancing and the QR
// iteration, a workgroup per matrix whose first invocation decides and
// whose others apply, stopping after a loop budget with their state in a
// buffer for the next dispatch.

// eigStateGLSL is the GLSL that loads the shared variables names from the
// state buffer arr (stride uints per matrix, matrix b) and that stores
// them back.
func eigStateGLSL(arr string, stride int, names ...string) (load, store string) {
	var l, st strings.Builder
	for i, n := range names {
		fmt.Fprintf(&l, "\t\t%s = %s[b * %du + %du];\n", n, arr, stride, i)
		fmt.Fprintf(&st, "\t\t%s[b * %du + %du] = %s;\n", arr, stride, i, n)
	}
	return l.String(), st.String()
}

// eigQRGLSL is the QR iteration (see eig.go). Bindings: H, st [, Z].
// Push: B, N, budget, itmax, rot (the loop iterations a rotation costs).
func eigQRGLSL(wk *eigWork) string {
	var b strings.Builder
	eigGroupHead(&b, wk)
	fmt.Fprintf(&b, "const bool WANTT = %v;\n", wk.vectors)
	b.WriteString(`layout(std430, binding = 0) coherent buffer B0 { C h[]; };
layout(std430, binding = 1) coherent buffer B1 { uint st[]; };
`)
	if wk.vectors {
		b.WriteString("layout(std430, binding = 2) coherent buffer B2 { C z[]; };\n")
	}
	b.WriteString(`layout(push_constant) uniform P { uint B; uint N; uint budget; uint itmax; uint rot; } p;
shared uint sHi1, sK1, sLo, sIts, sTot, sFail, sUnits, sAct, sRotK;
shared R sc;
shared C ss;
uint N, base;
uint at(uint i, uint j) { return base + i * N + j; }
C csqrtE(C a) {
	R r = laAbs(a);
	if (r == R(0)) return C(0);
	R t = sqrt(R(0.5) * (r + abs(a.x)));
	if (a.x >= R(0)) return C(t, a.y / (R(2) * t));
	return C(abs(a.y) / (R(2) * t), a.y >= R(0) ? t : -t);
}
// The rotation G = [c s; -conj(s) c] with G (x, y) = (r, 0): sets sc, ss.
C rotation(C x, C y) {
	R ax = laAbs(x), ay = laAbs(y);
	if (ay == R(0)) { sc = R(1); ss = C(0); return x; }
	if (ax == R(0)) { sc = R(0); ss = laConj(y) / ay; return C(ay, R(0)); }
	R m = max(ax, ay);
	R rho = m * sqrt((ax / m) * (ax / m) + (ay / m) * (ay / m));
	C ph = x / ax;
	sc = ax / rho;
	ss = laMul(ph, laConj(y)) / rho;
	return ph * rho;
}
// Whether h[l][l-1] is negligible (zlahqr's test, Ahues and Tisseur's).
bool negligible(uint l, uint hi) {
	R s = abs1(h[at(l, l - 1u)]);
	if (s <= SMLNUM) return true;
	R tst = abs1(h[at(l - 1u, l - 1u)]) + abs1(h[at(l, l)]);
	if (tst == R(0)) {
		if (l >= 2u) tst += abs1(h[at(l - 1u, l - 2u)]);
		if (l + 1u <= hi) tst += abs1(h[at(l + 1u, l)]);
	}
	if (!(s <= ULP * tst)) return false;
	R up = abs1(h[at(l - 1u, l)]);
	R ab = max(s, up), ba = min(s, up);
	R d1 = abs1(h[at(l, l)]), d2 = abs1(h[at(l - 1u, l - 1u)] - h[at(l, l)]);
	R aa = max(d1, d2), bb = min(d1, d2);
	R sum = aa + ab;
	return ba * (ab / sum) <= max(SMLNUM, ULP * (bb * (aa / sum)));
}
// The shift of a sweep over [l, hi].
C shift(uint l, uint hi) {
	if (sIts == 10u) return C(R(0.75) * abs(h[at(l + 1u, l)].x), R(0)) + h[at(l, l)];
	if (sIts == 20u) return C(R(0.75) * abs(h[at(hi, hi - 1u)].x), R(0)) + h[at(hi, hi)];
	C a = h[at(hi - 1u, hi - 1u)], bq = h[at(hi - 1u, hi)], c = h[at(hi, hi - 1u)], d = h[at(hi, hi)];
	C pp = R(0.5) * (a - d);
	C bc = laMul(bq, c);
	C disc = csqrtE(laMul(pp, pp) + bc);
	if (dot(pp, disc) < R(0)) disc = -disc;
	C den = pp + disc;
	if (den == C(0)) return d;
	return d - laDiv(bc, den);
}
// decide (the first invocation) picks the next action: sAct 0 stop, 1
// apply the rotation (sc, ss) at sRotK, 2 nothing (a deflation).
void decide() {
	sUnits += 1u;
	sAct = 0u;
	if (sHi1 == 0u || sUnits >= p.budget) return;
	uint hi = sHi1 - 1u;
	if (sK1 == 0u) {
		if (hi == 0u) { sHi1 = 0u; return; }
		uint l = hi;
		for (; l > 0u; l--) {
			sUnits += 1u;
			if (negligible(l, hi)) {
				h[at(l, l - 1u)] = C(0);
				break;
			}
		}
		if (l == hi) {
			sHi1 = hi;
			sIts = 0u;
			sAct = 2u;
			return;
		}
		sIts += 1u;
		sTot += 1u;
		if (sTot > p.itmax) { sFail = 1u; sHi1 = 0u; return; }
		C mu = shift(l, hi);
		rotation(h[at(l, l)] - mu, h[at(l + 1u, l)]);
		sLo = l;
		sRotK = l;
	} else {
		uint k = sK1 - 1u;
		C r = rotation(h[at(k, k - 1u)], h[at(k + 1u, k - 1u)]);
		h[at(k, k - 1u)] = r;
		h[at(k + 1u, k - 1u)] = C(0);
		sRotK = k;
	}
	sK1 = sRotK + 1u < hi ? sRotK + 2u : 0u;
	sAct = 1u;
	sUnits += p.rot;
}
void main() {
	uint b = wgid();
	if (b >= p.B) return;
	uint tid = gl_LocalInvocationIndex;
	N = p.N;
	base = b * N * N;
	if (tid == 0u) {
LOAD_STATE		sUnits = 0u;
	}
	barrier();
	for (uint g = 0u; g < p.budget; g++) {
		if (tid == 0u) decide();
		memoryBarrierBuffer();
		barrier();
		uint act = sAct, k = sRotK, lo = sLo, hi = sHi1 - 1u;
		R c = sc;
		C s = ss;
		barrier();
		if (act == 0u) break;
		if (act != 1u) continue;
		uint c1 = WANTT ? N : hi + 1u;
		for (uint j = k + tid; j < c1; j += WG) {
			C x = h[at(k, j)], y = h[at(k + 1u, j)];
			h[at(k, j)] = c * x + laMul(s, y);
			h[at(k + 1u, j)] = c * y - laMul(laConj(s), x);
		}
		memoryBarrierBuffer();
		barrier();
		uint r0 = WANTT ? 0u : lo, r1 = min(k + 2u, hi) + 1u;
		for (uint i = r0 + tid; i < r1; i += WG) {
			C x = h[at(i, k)], y = h[at(i, k + 1u)];
			h[at(i, k)] = c * x + laMul(laConj(s), y);
			h[at(i, k + 1u)] = c * y - laMul(s, x);
		}
`)
	if wk.vectors {
		zs := "laMul(laConj(s), y)"
		if eigMutate {
			zs = "-" + zs
		}
		fmt.Fprintf(&b, `		for (uint i = tid; i < N; i += WG) {
			C x = z[at(i, k)], y = z[at(i, k + 1u)];
			z[at(i, k)] = c * x + %s;
			z[at(i, k + 1u)] = c * y - laMul(s, x);
		}
`, zs)
	}
	b.WriteString(`		memoryBarrierBuffer();
		barrier();
	}
	if (tid == 0u) {
STORE_STATE	}
}
`)
	load, store := eigStateGLSL("st", 8, "sHi1", "sK1", "sLo", "sIts", "sTot", "sFail")
	return strings.NewReplacer("LOAD_STATE", load, "STORE_STATE", store).Replace(b.String())
}

// eigBalanceGLSL balances H (see eig.go), a workgroup per matrix, from
// where the last dispatch stopped: bst holds the row, whether the sweep
// changed something, the sweeps done and whether balancing is done.
// Bindings: H, D, bst. Push: B, N, budget, sweeps, unit (the loop
// iterations of a row).
func eigBalanceGLSL(wk *eigWork) string {
	var b strings.Builder
	eigGroupHead(&b, wk)
	// A row's scaling is at most 2^±lim at a time, so no step overflows.
	lim := 30
	if wk.acc == tensor.Float64 {
		lim = 250
	}
	fmt.Fprintf(&b, "const R LIM = R(%d);\n", lim)
	b.WriteString(`layout(std430, binding = 0) coherent buffer B0 { C h[]; };
layout(std430, binding = 1) coherent buffer B1 { R dd[]; };
layout(std430, binding = 2) coherent buffer B2 { uint bst[]; };
layout(push_constant) uniform P { uint B; uint N; uint budget; uint sweeps; uint unit; } p;
shared uint sI, sChanged, sSweeps, sDone, sUnits;
shared R sF;
shared R sv[WG];
shared R sw[WG];
void main() {
	uint b = wgid();
	if (b >= p.B) return;
	uint tid = gl_LocalInvocationIndex;
	uint N = p.N, base = b * N * N;
	if (tid == 0u) {
LOAD_STATE		sUnits = 0u;
	}
	barrier();
	for (uint g = 0u; g < p.budget; g++) {
		if (sDone != 0u || sUnits >= p.budget) break;
		uint i = sI;
		R c = R(0), r = R(0);
		for (uint j = tid; j < N; j += WG) {
			if (j != i) {
				c += abs1(h[base + j * N + i]);
				r += abs1(h[base + i * N + j]);
			}
		}
		sv[tid] = c;
		sw[tid] = r;
`)
	b.WriteString(treeGLSL("sv[tid] += sv[tid + s]; sw[tid] += sw[tid + s];"))
	b.WriteString(`		if (tid == 0u) {
			c = sv[0];
			r = sw[0];
			R f = R(1);
			if (c > R(0) && r > R(0) && !isinf(c) && !isinf(r) && !isnan(c) && !isnan(r)) {
				R e = clamp(round(R(0.5) * R(log2(float(r / c)))), -LIM, LIM);
				f = ldexp(R(1), int(e));
				if (c * f + r / f >= R(0.95) * (c + r)) f = R(1);
			}
			sF = f;
		}
		barrier();
		R f = sF;
		if (f != R(1)) {
			for (uint j = tid; j < N; j += WG) {
				if (j != i) {
					h[base + j * N + i] *= f;
					h[base + i * N + j] /= f;
				}
			}
		}
		memoryBarrierBuffer();
		barrier();
		if (tid == 0u) {
			if (f != R(1)) {
				dd[b * N + i] *= f;
				sChanged = 1u;
			}
			sUnits += p.unit;
			i++;
			if (i == N) {
				i = 0u;
				sSweeps++;
				if (sChanged == 0u || sSweeps >= p.sweeps) sDone = 1u;
				sChanged = 0u;
			}
			sI = i;
		}
		barrier();
	}
	if (tid == 0u) {
STORE_STATE	}
}
`)
	load, store := eigStateGLSL("bst", 4, "sI", "sChanged", "sSweeps", "sDone")
	return strings.NewReplacer("LOAD_STATE", load, "STORE_STATE", store).Replace(b.String())
}
