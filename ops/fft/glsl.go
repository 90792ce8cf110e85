package fft

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vkflow/vkflow/ops/internal/opcore"
	"github.com/vkflow/vkflow/tensor"
)

// GLSL of the FFT ops (build.go runs them). Complex values are vec2
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
`, opcore.LocalSize, opcore.IndexGLSL, c)
}

// fftLiteral writes v as a GLSL constant of real type r.
func fftLiteral(v float64, r string) string {
	if r == "double" {
		return strconv.FormatFloat(v, 'e', 17, 64) + "LF"
	}
	return strconv.FormatFloat(float64(float32(v)), 'e', 9, 32)
}

// fftPass is one Stockham pass of radix R over rows of length L (push
// constants): invocation j of a row reads the R elements j + r*L/R,
// multiplies element r by the twiddle exp(-+2 pi i r (j mod Ns)/(Ns R))
// (tw holds exp(-2 pi i t/L): index r (j mod Ns) L/(Ns R)), transforms the
// R values, and writes output k2 at (j/Ns) Ns R + j mod Ns + k2 Ns. Ns is
// the product of the radices of the passes before. The result is in
// natural order after the last pass (no bit reversal).
//
// The first pass of a transform reads the input tensor itself (load) and
// the last writes the output tensor (store), so a transform of P passes
// reads and writes memory P times.
type fftPass struct {
	cd      tensor.Dtype
	radix   int // 1 for a transform of length 1: the load and the store
	inverse bool
	// load: element k of row (o, i) is x[(o*M + k)*inner + i] for k <
	// nread, zero past it (padding; a shorter n crops). realIn: x is real.
	// herm: x holds the first half of a Hermitian sequence of length N,
	// which the load extends (k > N/2 reads conj(x[N-k])). chirpIn: each k <
	// N is multiplied by ch[k] (Bluestein), and k >= N is zero.
	load, realIn, herm, chirpIn bool
	// filter: the outputs are multiplied by f[k] (Bluestein's filter).
	filter bool
	// store: output k < Nout of row (o, i), times scale (and ch[k] with
	// chirpOut), goes to y[(o*Nout + k)*inner + i]: the complex value, or
	// its real part (realOut).
	store, realOut, chirpOut bool
}

// fftPassPush is the push constant block of every pass, after the scale
// (float or double, first for alignment).
const fftPassPush = "uint total; uint L; uint Ns; uint M; uint nread; uint inner; uint N; uint Nout;"

// tables returns the names of the tables the pass reads, in binding order
// from 2: the twiddles tw (radix above 1), the chirp ch (chirpIn,
// chirpOut), the filter f.
func (p fftPass) tables() []string {
	var t []string
	if p.radix > 1 {
		t = append(t, "tw")
	}
	if p.chirpIn || p.chirpOut {
		t = append(t, "ch")
	}
	if p.filter {
		t = append(t, "f")
	}
	return t
}

// source returns the pass's GLSL. Bindings: 0 the input (x or the work
// buffer), 1 the output (y or a work buffer), then the tables.
func (p fftPass) source() string {
	c, r := fftTypes(p.cd)
	var b strings.Builder
	b.WriteString(fftHeader(p.cd))
	in, out := c, c
	if p.load && p.realIn {
		in = r
	}
	if p.store && p.realOut {
		out = r
	}
	fmt.Fprintf(&b, `layout(binding = 0) readonly buffer B0 { %s a[]; };
layout(binding = 1) writeonly buffer B1 { %s z[]; };
`, in, out)
	for i, name := range p.tables() {
		fmt.Fprintf(&b, "layout(binding = %d) readonly buffer B%d { %s %s[]; };\n", i+2, i+2, c, name)
	}
	fmt.Fprintf(&b, "layout(push_constant) uniform P { %s scale; %s };\n", r, fftPassPush)
	// ld(row, k): element k of row.
	fmt.Fprintf(&b, "%s ld(uint row, uint k) {\n", c)
	if !p.load {
		b.WriteString("\treturn a[row * L + k];\n}\n")
	} else {
		fmt.Fprintf(&b, "\t%s v = %s(0);\n\tuint kk = k;\n", c, c)
		if p.herm {
			b.WriteString("\tif (k > N / 2) kk = N - k;\n")
		}
		b.WriteString("\tif (k < N && kk < nread) {\n\t\tuint o = row / inner, i = row % inner;\n")
		if p.realIn {
			fmt.Fprintf(&b, "\t\tv = %s(a[(o * M + kk) * inner + i], 0);\n", c)
		} else {
			b.WriteString("\t\tv = a[(o * M + kk) * inner + i];\n")
		}
		if p.herm {
			b.WriteString("\t\tif (k > N / 2) v.y = -v.y;\n")
		}
		if p.chirpIn {
			b.WriteString("\t\tv = cmul(v, ch[k]);\n")
		}
		b.WriteString("\t}\n\treturn v;\n}\n")
	}
	// st(row, k, v): output k of row.
	fmt.Fprintf(&b, "void st(uint row, uint k, %s v) {\n", c)
	switch {
	case p.filter:
		b.WriteString("\tz[row * L + k] = cmul(v, f[k]);\n")
	case !p.store:
		b.WriteString("\tz[row * L + k] = v;\n")
	default:
		b.WriteString("\tif (k >= Nout) return;\n")
		if p.chirpOut {
			b.WriteString("\tv = cmul(v, ch[k]);\n")
		}
		b.WriteString("\tuint o = row / inner, i = row % inner;\n")
		if p.realOut {
			b.WriteString("\tz[(o * Nout + k) * inner + i] = v.x * scale;\n")
		} else {
			b.WriteString("\tz[(o * Nout + k) * inner + i] = v * scale;\n")
		}
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, `void main() {
	uint g = gid();
	if (g >= total) return;
	uint q = L / %d;
	uint row = g / q, j = g %% q;
	uint k1 = j %% Ns;
	uint step = q / Ns;
`, p.radix)
	conj := ""
	if p.inverse {
		conj = " * " + c + "(1, -1)"
	}
	for k := 0; k < p.radix; k++ {
		if k == 0 {
			fmt.Fprintf(&b, "\t%s v0 = ld(row, j);\n", c)
			continue
		}
		fmt.Fprintf(&b, "\t%s v%d = cmul(ld(row, j + %d * q), tw[%d * k1 * step]%s);\n", c, k, k, k, conj)
	}
	g := &dftGen{b: &b, c: c, r: r, sign: -1}
	if p.inverse {
		g.sign = 1
	}
	names := make([]string, p.radix)
	for k := range names {
		names[k] = "v" + strconv.Itoa(k)
	}
	res := g.dft(names)
	b.WriteString("\tuint d = (j / Ns) * Ns * " + strconv.Itoa(p.radix) + " + k1;\n")
	for k, v := range res {
		fmt.Fprintf(&b, "\tst(row, d + %d * Ns, %s);\n", k, v)
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
