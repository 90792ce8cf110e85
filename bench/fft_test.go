package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// The FFT benchmarks of bench/fft.sh: complex64 transforms along the last
// axis, against NumPy's pocketfft (bench/fft_numpy.py) in the same run.
var fftWorkloads = []struct {
	name       string
	rows, cols int
}{
	{"fft_1m", 1, 1 << 20},        // one transform of 2^20 points
	{"fft_1024x1024", 1024, 1024}, // a batch of 1024 rows of 1024
	{"fft_256x4093", 256, 4093},   // a prime length (Bluestein), 256 rows
}

// newFFTEnv prepares "fft" over a random complex64 [rows, cols] tensor
// into a preallocated output; verify checks 32 bins of a few rows against
// the direct sum in float64.
func newFFTEnv(m *vkflow.Manager, rows, cols int) (*opEnv, error) {
	r := rand.New(rand.NewPCG(1, 2))
	xv := make([]complex64, rows*cols)
	for i := range xv {
		xv[i] = complex(float32(2*r.Float64()-1), float32(2*r.Float64()-1))
	}
	x, err := tensor.FromSlice(m, xv, rows, cols)
	if err != nil {
		return nil, err
	}
	out, err := tensor.New(m, tensor.Complex64, []int{rows, cols})
	if err != nil {
		_ = x.Close()
		return nil, err
	}
	e, err := prepareOp(m, "fft", []*tensor.Tensor{x}, []*tensor.Tensor{out}, ops.Attrs{})
	if err != nil {
		return nil, err
	}
	e.verify = func() error {
		buf := make([]byte, out.Bytes())
		if err := out.ReadBytes(buf); err != nil {
			return err
		}
		got := func(i int) complex128 {
			re := math.Float32frombits(uint32(buf[8*i]) | uint32(buf[8*i+1])<<8 | uint32(buf[8*i+2])<<16 | uint32(buf[8*i+3])<<24)
			im := math.Float32frombits(uint32(buf[8*i+4]) | uint32(buf[8*i+5])<<8 | uint32(buf[8*i+6])<<16 | uint32(buf[8*i+7])<<24)
			return complex(float64(re), float64(im))
		}
		for q := range 32 {
			row, k := (q*131)%rows, (q*7919+3)%cols
			var want complex128
			var mag float64
			for j := range cols {
				t := int(uint64(j) * uint64(k) % uint64(cols))
				s, c := math.Sincos(-2 * math.Pi * float64(t) / float64(cols))
				v := complex128(xv[row*cols+j])
				want += v * complex(c, s)
				mag += math.Hypot(real(v), imag(v))
			}
			d := got(row*cols+k) - want
			if math.Hypot(real(d), imag(d)) > 1e-5*mag {
				return fmt.Errorf("fft: out[%d,%d] = %v, want %v", row, k, got(row*cols+k), want)
			}
		}
		return nil
	}
	return e, nil
}

func BenchmarkFFT(b *testing.B) {
	for _, w := range fftWorkloads {
		b.Run(w.name, func(b *testing.B) {
			benchOp(b, "fft", func(m *vkflow.Manager) (*opEnv, error) { return newFFTEnv(m, w.rows, w.cols) },
				0, 5*float64(w.rows*w.cols)*math.Log2(float64(w.cols)), 1) // 5 n log2 n flops per transform
		})
	}
}

// TestFFTBenchSmoke runs the FFT workload setup once on small sizes, with
// validation on as in the rest of the suite.
func TestFFTBenchSmoke(t *testing.T) {
	if !hasOp("fft") {
		t.Skip("no fft op")
	}
	m, _ := testutil.Manager(t)
	for _, sz := range [][2]int{{1, 4096}, {8, 64}, {3, 101}} {
		e, err := newFFTEnv(m, sz[0], sz[1])
		if err != nil {
			t.Fatal(err)
		}
		if err := e.op.Run(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := e.verify(); err != nil {
			t.Error(err)
		}
		if err := e.close(); err != nil {
			t.Error(err)
		}
	}
}
