package dlpack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// wholeView imports src's export to dev as a second handle on src's
// buffer (zero-copy); closing the view deletes the export.
func wholeView(t *testing.T, m *vkflow.Manager, src *tensor.Tensor, dev DeviceType) *tensor.Tensor {
	t.Helper()
	ex, err := Export(ctx, src, Options{Device: &Device{dev, int32(m.Device().Index)}})
	require.NoError(t, err)
	view, copied, err := Import(ctx, m, ex)
	require.NoError(t, err)
	require.False(t, copied)
	require.Equal(t, src.Allocation().Buffer, view.Allocation().Buffer)
	t.Cleanup(func() { view.Close() })
	return view
}

func full(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// Eager calls order by memory, not by handle: a call on a view of a
// tensor's buffer sees what a call on the tensor wrote, and the other way
// round, with the barriers synchronization validation checks. Issue 22,
// item 3 (the eager side).
func TestStreamOrdersViewsByMemory(t *testing.T) {
	for _, dev := range []DeviceType{Vulkan, CPU} {
		t.Run(dev.String(), func(t *testing.T) {
			const n = 1 << 12
			m, _ := testutil.Manager(t)
			s, err := ops.DefaultStream(m)
			require.NoError(t, err)
			src, err := tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Host))
			require.NoError(t, err)
			view := wholeView(t, m, src, dev)
			two, err := tensor.FromSlice(m, full(n, 2))
			require.NoError(t, err)
			three, err := tensor.FromSlice(m, full(n, 3))
			require.NoError(t, err)
			a, err := tensor.New(m, tensor.Float32, []int{n})
			require.NoError(t, err)
			b, err := tensor.New(m, tensor.Float32, []int{n})
			require.NoError(t, err)
			call := func(in []*tensor.Tensor, out *tensor.Tensor) {
				_, err := s.Call("mul", in, []*tensor.Tensor{out}, ops.Attrs{})
				require.NoError(t, err)
			}
			for round := 0; round < 2; round++ {
				call([]*tensor.Tensor{two, two}, src)      // src = 4 (write)
				call([]*tensor.Tensor{view, three}, a)     // a = view*3 = 12 (RAW through the view)
				call([]*tensor.Tensor{three, three}, view) // view = 9 (WAR after the read, WAW after the write)
				call([]*tensor.Tensor{src, two}, b)        // b = src*2 = 18 (RAW through the tensor)
				require.NoError(t, s.Synchronize(ctx))
				got, err := a.Float32s()
				require.NoError(t, err)
				assert.Equal(t, full(n, 12), got)
				got, err = b.Float32s()
				require.NoError(t, err)
				assert.Equal(t, full(n, 18), got)
			}
		})
	}
}

// Tensor.Wait on one handle waits for the GPU work submitted on any
// handle of the same memory: a host read of a view after Wait sees what
// a call on the tensor wrote. Issue 22, item 3 (host side).
func TestWaitOnViewCoversTensorUses(t *testing.T) {
	for _, dev := range []DeviceType{Vulkan, CPU} {
		t.Run(dev.String(), func(t *testing.T) {
			const n = 1 << 22 // long enough on lavapipe that a missed wait reads zeros
			m, _ := testutil.Manager(t)
			s, err := ops.DefaultStream(m)
			require.NoError(t, err)
			src, err := tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Host))
			require.NoError(t, err)
			view := wholeView(t, m, src, dev)
			x, err := tensor.FromSlice(m, full(n, 3))
			require.NoError(t, err)
			zeros := make([]byte, 4*n)
			for _, c := range []struct {
				name          string
				write, waitOn *tensor.Tensor
			}{
				{"write the tensor, wait on the view", src, view},
				{"write the view, wait on the tensor", view, src},
			} {
				require.NoError(t, s.Synchronize(ctx))
				require.NoError(t, src.WriteBytes(zeros))
				_, err := s.Call("mul", []*tensor.Tensor{x, x}, []*tensor.Tensor{c.write}, ops.Attrs{})
				require.NoError(t, err)
				require.NoError(t, c.waitOn.Wait(ctx), c.name)
				got, err := c.waitOn.Float32s()
				require.NoError(t, err)
				bad := 0
				for _, v := range got {
					if v != 9 {
						bad++
					}
				}
				require.Zero(t, bad, "%s: %d of %d elements read before the call wrote them", c.name, bad, n)
			}
		})
	}
}
