package ops

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vkflow/vkflow/tensor"
)

// GLSL of the FFT ops (fft_build.go runs them). Complex values are vec2
// (complex64) or dvec2 (complex128): real, then imaginary, as the tensors
// store them. The work buffers are [rows, L], one transform per row. Every
// invocation does a fixed amount of work: no loops.

// fftTypes returns the GLSL complex and real types of complex dtype cd.
func fftTypes(cd tensor.Dtype) (c, r string) {
	if cd == tensor.Complex128 {
		return "dvec2", "double"
	}
	return "vec2", "float"
}

// fftHeader opens an FFT kernel over complex dtype cd: version, local
// size, gid() and cmul.
func fftHeader(cd tensor.Dtype) string {
	c, _ := fftTypes(cd)
	return fmt.Sprintf(`#version 450
layout(local_size_x = %d) in;
%s%[3]s cmul(%[3]s a, %[3]s b) { return %[3]s(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
`, localSize, indexGLSL, c)
}

// fftLiteral writes v as a GLSL constant of real type r.
func fftLiteral(v float64, r string) string {
	if r == "double" {
		return strconv.FormatFloat(v, 'e', 17, 64) + "LF"
	}
	return strconv.FormatFloat(float64(float32(v)), 'e', 9, 32)
}

// fftLoadSource gathers rows of x into the work buffer: element k of row
// (o, i) is x[(o*M + k)*inner + i] for k < nread, zero past it (padding;
// a shorter n crops). realIn: x is real (imaginary parts zero). herm: x
// holds the first half of a Hermitian sequence of length N, which the
// load extends (k > N/2 reads conj(x[N-k])). chirp: each k < N is
// multiplied by chirp[k] (Bluestein), and k >= N is zero.
func fftLoadSource(cd tensor.Dtype, realIn, herm, chirp bool) string {
	c, r := fftTypes(cd)
	var b strings.Builder
	b.WriteString(fftHeader(cd))
	in := c
	if realIn {
		in = r
	}
	fmt.Fprintf(&b, `layout(binding = 0) readonly buffer B0 { %s x[]; };
layout(binding = 1) writeonly buffer B1 { %s w[]; };
`, in, c)
	if chirp {
		fmt.Fprintf(&b, "layout(binding = 2) readonly buffer B2 { %s ch[]; };\n", c)
	}
	b.WriteString("layout(push_constant) uniform P { uint total; uint L; uint M; uint nread; uint inner; uint N; };\n")
	fmt.Fprintf(&b, `void main() {
	uint e = gid();
	if (e >= total) return;
	uint row = e / L, k = e %% L;
	uint o = row / inner, i = row %% inner;
	%[1]s v = %[1]s(0);
	uint kk = k;
`, c)
	if herm {
		b.WriteString("\tif (k > N / 2) kk = N - k;\n")
	}
	b.WriteString("\tif (k < N && kk < nread) {\n")
	if realIn {
		fmt.Fprintf(&b, "\t\tv = %s(x[(o * M + kk) * inner + i], 0);\n", c)
	} else {
		b.WriteString("\t\tv = x[(o * M + kk) * inner + i];\n")
	}
	if herm {
		b.WriteString("\t\tif (k > N / 2) v.y = -v.y;\n")
	}
	if chirp {
		b.WriteString("\t\tv = cmul(v, ch[k]);\n")
	}
	b.WriteString("\t}\n\tw[e] = v;\n}\n")
	return b.String()
}

// fftPassSource is one Stockham pass of radix R over rows of length L
// (push constants): invocation j of a row reads the R elements j + r*L/R,
// multiplies element r by the twiddle exp(-+2 pi i r (j mod Ns)/(Ns R))
// (tw holds exp(-2 pi i t/L): index r (j mod Ns) L/(Ns R)), transforms the
// R values, and writes output k2 at (j/Ns) Ns R + j mod Ns + k2 Ns. Ns is
// the product of the radices of the passes before. The result is in
// natural order after the last pass (no bit reversal).
func fftPassSource(cd tensor.Dtype, radix int, inverse bool) string {
	c, r := fftTypes(cd)
	var b strings.Builder
	b.WriteString(fftHeader(cd))
	fmt.Fprintf(&b, `layout(binding = 0) readonly buffer B0 { %[1]s a[]; };
layout(binding = 1) writeonly buffer B1 { %[1]s z[]; };
layout(binding = 2) readonly buffer B2 { %[1]s tw[]; };
layout(push_constant) uniform P { uint total; uint L; uint Ns; };
void main() {
	uint g = gid();
	if (g >= total) return;
	uint q = L / %[2]d;
	uint row = g / q, j = g %% q;
	uint base = row * L;
	uint k1 = j %% Ns;
	uint step = q / Ns;
`, c, radix)
	conj := ""
	if inverse {
		conj = " * " + c + "(1, -1)"
	}
	for k := 0; k < radix; k++ {
		if k == 0 {
			fmt.Fprintf(&b, "\t%s v0 = a[base + j];\n", c)
			continue
		}
		fmt.Fprintf(&b, "\t%s v%d = cmul(a[base + j + %d * q], tw[%d * k1 * step]%s);\n", c, k, k, k, conj)
	}
	g := &dftGen{b: &b, c: c, r: r, sign: -1}
	if inverse {
		g.sign = 1
	}
	in := make([]string, radix)
	for k := range in {
		in[k] = "v" + strconv.Itoa(k)
	}
	out := g.dft(in)
	b.WriteString("\tuint d = base + (j / Ns) * Ns * " + strconv.Itoa(radix) + " + k1;\n")
	for k, v := range out {
		fmt.Fprintf(&b, "\tz[d + %d * Ns] = %s;\n", k, v)
	}
	b.WriteString("}\n")
	return b.String()
}

// dftGen writes the GLSL of a small DFT on named values: radix 2 splits
// for powers of two, the symmetric pairs of the DFT sum for odd sizes.
type dftGen struct {
	b    *strings.Builder
	c, r string
	sign float64 // -1 forward, +1 inverse
	tmp  int
}

func (g *dftGen) let(expr string) string {
	name := "t" + strconv.Itoa(g.tmp)
	g.tmp++
	fmt.Fprintf(g.b, "\t%s %s = %s;\n", g.c, name, expr)
	return name
}

// root multiplies value x by exp(sign 2 pi i k/n).
func (g *dftGen) root(x string, k, n int) string {
	k %= n
	switch {
	case k == 0:
		return x
	case 2*k == n:
		return g.let("-" + x)
	case 4*k == n: // sign*i
		if g.sign > 0 {
			return g.let(fmt.Sprintf("%s(-%s.y, %s.x)", g.c, x, x))
		}
		return g.let(fmt.Sprintf("%s(%s.y, -%s.x)", g.c, x, x))
	case 4*k == 3*n: // -sign*i
		if g.sign > 0 {
			return g.let(fmt.Sprintf("%s(%s.y, -%s.x)", g.c, x, x))
		}
		return g.let(fmt.Sprintf("%s(-%s.y, %s.x)", g.c, x, x))
	}
	cs, sn := sincosPi(uint64(2*k), uint64(n))
	return g.let(fmt.Sprintf("cmul(%s, %s(%s, %s))", x, g.c, fftLiteral(cs, g.r), fftLiteral(g.sign*sn, g.r)))
}

// dft returns the names of the transform of in (len(in) a power of two,
// or odd).
func (g *dftGen) dft(in []string) []string {
	n := len(in)
	if n == 1 {
		return in
	}
	if n%2 == 1 {
		return g.odd(in)
	}
	even, odd := make([]string, 0, n/2), make([]string, 0, n/2)
	for k, v := range in {
		if k%2 == 0 {
			even = append(even, v)
		} else {
			odd = append(odd, v)
		}
	}
	e, o := g.dft(even), g.dft(odd)
	out := make([]string, n)
	for k := 0; k < n/2; k++ {
		t := g.root(o[k], k, n)
		out[k] = g.let(e[k] + " + " + t)
		out[k+n/2] = g.let(e[k] + " - " + t)
	}
	return out
}

// odd is the DFT of odd length n by pairs: with s_r = v_r + v_(n-r) and
// d_r = v_r - v_(n-r), out_k = v_0 + sum_r s_r cos(2 pi rk/n) + sign i d_r
// sin(2 pi rk/n).
func (g *dftGen) odd(in []string) []string {
	n := len(in)
	h := (n - 1) / 2
	s, d := make([]string, h+1), make([]string, h+1)
	sum := in[0]
	for r := 1; r <= h; r++ {
		s[r] = g.let(in[r] + " + " + in[n-r])
		d[r] = g.let(in[r] + " - " + in[n-r])
		sum += " + " + s[r]
	}
	out := make([]string, n)
	out[0] = g.let(sum)
	for k := 1; k <= h; k++ {
		re, im := in[0], g.c+"(0)"
		for r := 1; r <= h; r++ {
			cs, sn := sincosPi(uint64(2*(r*k%n)), uint64(n))
			re += fmt.Sprintf(" + %s * %s", s[r], fftLiteral(cs, g.r))
			im += fmt.Sprintf(" + %s * %s", d[r], fftLiteral(g.sign*sn, g.r))
		}
		a := g.let(re)
		bb := g.let(im)                                          // the sine-weighted differences
		ib := g.let(fmt.Sprintf("%s(-%s.y, %s.x)", g.c, bb, bb)) // times i
		out[k] = g.let(a + " + " + ib)
		out[n-k] = g.let(a + " - " + ib)
	}
	return out
}

// fftScaleSource multiplies the work buffer in place by f[e mod L]
// (Bluestein's filter, in the frequency domain).
func fftScaleSource(cd tensor.Dtype) string {
	c, _ := fftTypes(cd)
	return fftHeader(cd) + fmt.Sprintf(`layout(binding = 0) buffer B0 { %[1]s w[]; };
layout(binding = 1) readonly buffer B1 { %[1]s f[]; };
layout(push_constant) uniform P { uint total; uint L; };
void main() {
	uint e = gid();
	if (e >= total) return;
	w[e] = cmul(w[e], f[e %% L]);
}
`, c)
}

// fftStoreSource writes element k < Nout of each work row, times scale
// (and chirp[k] for Bluestein), to y[(o*Nout + k)*inner + i]: the complex
// value, or its real part (realOut).
func fftStoreSource(cd tensor.Dtype, realOut, chirp bool) string {
	c, r := fftTypes(cd)
	var b strings.Builder
	b.WriteString(fftHeader(cd))
	out := c
	if realOut {
		out = r
	}
	fmt.Fprintf(&b, `layout(binding = 0) readonly buffer B0 { %s w[]; };
layout(binding = 1) writeonly buffer B1 { %s y[]; };
`, c, out)
	if chirp {
		fmt.Fprintf(&b, "layout(binding = 2) readonly buffer B2 { %s ch[]; };\n", c)
	}
	fmt.Fprintf(&b, `layout(push_constant) uniform P { %s scale; uint total; uint Nout; uint inner; uint L; };
void main() {
	uint e = gid();
	if (e >= total) return;
	uint span = Nout * inner;
	uint o = e / span, rest = e %% span;
	uint k = rest / inner, i = rest %% inner;
	%s v = w[(o * inner + i) * L + k];
`, r, c)
	if chirp {
		b.WriteString("\tv = cmul(v, ch[k]);\n")
	}
	if realOut {
		b.WriteString("\ty[e] = v.x * scale;\n}\n")
	} else {
		b.WriteString("\ty[e] = v * scale;\n}\n")
	}
	return b.String()
}
