package vkflow_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// WithWaitSpin and VKFLOW_WAIT_SPIN decide whether a host wait polls
// before it sleeps: with a spin far longer than the work every counted wait
// ends while polling; with none, every one goes to vkWaitSemaphores. The
// environment variable overrides the option; bad values are refused.
func TestWaitSpin(t *testing.T) {
	tests := []struct {
		name   string
		env    string
		opts   []vkflow.Option
		polled bool // the waits end while polling (else: all block)
		is     error
	}{
		{name: "long spin", opts: []vkflow.Option{vkflow.WithWaitSpin(time.Minute)}, polled: true},
		{name: "no spin", opts: []vkflow.Option{vkflow.WithWaitSpin(0)}},
		{name: "env 0 overrides", env: "0", opts: []vkflow.Option{vkflow.WithWaitSpin(time.Minute)}},
		{name: "env duration overrides", env: "1m", opts: []vkflow.Option{vkflow.WithWaitSpin(0)}, polled: true},
		{name: "env not a duration", env: "fast", is: vkflow.ErrInvalid},
		{name: "negative", opts: []vkflow.Option{vkflow.WithWaitSpin(-time.Microsecond)}, is: vkflow.ErrInvalid},
		{name: "env negative", env: "-5us", is: vkflow.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("VKFLOW_WAIT_SPIN", tt.env)
			m, _, err := testutil.Open(t, tt.opts...)
			if tt.is != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tt.is)
				return
			}
			require.NoError(t, err)
			s, err := ops.DefaultStream(m)
			require.NoError(t, err)
			a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
			require.NoError(t, err)
			before := m.WaitStats()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for i := 0; i < 10; i++ {
				outs, err := s.Call("add", []*tensor.Tensor{a, a}, nil, ops.Attrs{})
				require.NoError(t, err)
				require.NoError(t, outs[0].Wait(ctx))
				got, err := outs[0].Float32s()
				require.NoError(t, err)
				assert.Equal(t, []float32{2, 4, 6, 8}, got)
				require.NoError(t, outs[0].Close())
			}
			st := m.WaitStats()
			polled, blocked := st.Polled-before.Polled, st.Blocked-before.Blocked
			assert.NotZero(t, polled+blocked, "no wait reached the driver")
			if tt.polled {
				assert.Zero(t, blocked, "waits that slept with a one-minute spin")
			} else {
				assert.Zero(t, polled, "waits that polled with no spin")
			}
		})
	}
}
