package tensor_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// Close racing the host accessors: every accessor either works on a live
// tensor or returns ErrClosed; none touches freed memory. Run with -race.
func TestCloseRacesAccessors(t *testing.T) {
	for _, staged := range []bool{false, true} {
		name := "mapped"
		var opts []vkflow.Option
		if staged {
			name, opts = "staged", []vkflow.Option{vkflow.WithStagedDeviceMemory()}
		}
		t.Run(name, func(t *testing.T) {
			m, _ := testutil.Manager(t, opts...)
			accessors := []func(*tensor.Tensor) error{
				func(x *tensor.Tensor) error { _, err := x.Float32s(); return err },
				func(x *tensor.Tensor) error { return x.ReadBytes(make([]byte, 64)) },
				func(x *tensor.Tensor) error { return x.WriteBytes(make([]byte, 64)) },
				func(x *tensor.Tensor) error { return tensor.Write(x, make([]float32, 16)) },
				func(x *tensor.Tensor) error { _ = x.Mapped(); _ = x.Memory(); _ = x.String(); return nil },
			}
			for i := 0; i < 30; i++ {
				x, err := tensor.FromSlice(m, make([]float32, 16))
				require.NoError(t, err)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for _, f := range accessors {
					wg.Add(1)
					go func(f func(*tensor.Tensor) error) {
						defer wg.Done()
						<-start
						for k := 0; k < 20; k++ {
							if err := f(x); err != nil && !errors.Is(err, vkflow.ErrClosed) {
								assert.NoError(t, err)
								return
							}
						}
					}(f)
				}
				close(start)
				require.NoError(t, x.Close())
				wg.Wait()
				_, err = x.Float32s()
				assert.ErrorIs(t, err, vkflow.ErrClosed)
			}
		})
	}
}
