package bench

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// hostPathBytes is the size of BenchmarkHostPath's tensor: 16M float32,
// as mul16m_e2e.
const hostPathBytes = 64 << 20

// hostPathModes are the paths bench/hostpath.sh compares: auto is what a
// user gets (on lavapipe, whose memory is cached, the mapping both ways; on
// a discrete GPU, a copy for reads), the others force one path both ways.
var hostPathModes = []struct {
	name string
	path vkflow.HostPath
}{
	{"auto", vkflow.HostAuto},
	{"mapped", vkflow.HostMapped},
	{"staged", vkflow.HostStaged},
	{"ring", vkflow.HostRing},
}

// BenchmarkHostPath reads and writes a 64 MiB Device tensor from the host
// (ReadBytes and WriteBytes of a Go slice: a copy each way, as torch's
// .cpu() and .cuda()) through each host path; b.SetBytes gives MB/s.
func BenchmarkHostPath(b *testing.B) {
	for _, mode := range hostPathModes {
		for _, dir := range []string{"read", "write"} {
			b.Run(dir+"_"+mode.name, func(b *testing.B) {
				m, err := vkflow.New(vkflow.WithValidation(false), vkflow.WithHostReads(mode.path), vkflow.WithHostWrites(mode.path))
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				x, err := tensor.New(m, tensor.Uint8, []int{hostPathBytes})
				if err != nil {
					b.Fatal(err)
				}
				host := make([]byte, hostPathBytes)
				for i := range host {
					host[i] = byte(i * 31)
				}
				if err := x.WriteBytes(host); err != nil {
					b.Fatal(err)
				}
				f := x.ReadBytes
				if dir == "write" {
					f = x.WriteBytes
				}
				b.SetBytes(hostPathBytes)
				loop(b, func() error { return f(host) })
			})
		}
	}
}

// The benchmark's paths move the right bytes: each mode reads back what
// it wrote.
func TestHostPathBench(t *testing.T) {
	for _, mode := range hostPathModes {
		m, _ := testutil.Manager(t, vkflow.WithHostReads(mode.path), vkflow.WithHostWrites(mode.path))
		x, err := tensor.New(m, tensor.Uint8, []int{3 << 20})
		require.NoError(t, err)
		in := make([]byte, 3<<20)
		for i := range in {
			in[i] = byte(i*31 + i>>10)
		}
		require.NoError(t, x.WriteBytes(in))
		out := make([]byte, len(in))
		require.NoError(t, x.ReadBytes(out))
		require.Equal(t, in, out, mode.name)
	}
}
