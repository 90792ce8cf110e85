package vkflow_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

func TestDevices(t *testing.T) {
	devs, err := vkflow.Devices()
	require.NoError(t, err)
	require.NotEmpty(t, devs, "lavapipe at least (mesa-vulkan-drivers)")
	for i, d := range devs {
		assert.Equal(t, i, d.Index)
		assert.NotEmpty(t, d.Name)
		assert.NotEmpty(t, d.QueueFamilies)
		assert.Contains(t, d.String(), d.Name)
	}
}

func TestDeviceSelection(t *testing.T) {
	devs, err := vkflow.Devices()
	require.NoError(t, err)
	first := devs[0]
	tests := []struct {
		name string
		env  string
		opts []vkflow.Option
		want string // device name, or "" for an error
		is   error
	}{
		{name: "default", want: "*"},
		{name: "by index", opts: []vkflow.Option{vkflow.WithDevice(0)}, want: first.Name},
		{name: "by name, any case", opts: []vkflow.Option{vkflow.WithDeviceName(first.Name[:3])}, want: first.Name},
		{name: "index out of range", opts: []vkflow.Option{vkflow.WithDevice(len(devs))}, is: vkflow.ErrInvalid},
		{name: "no such name", opts: []vkflow.Option{vkflow.WithDeviceName("no-such-gpu")}, is: vkflow.ErrNoDevice},
		{name: "env index overrides", env: "0", opts: []vkflow.Option{vkflow.WithDevice(len(devs))}, want: first.Name},
		{name: "env name overrides", env: first.Name[:3], opts: []vkflow.Option{vkflow.WithDevice(len(devs))}, want: first.Name},
		{name: "env bad name", env: "no-such-gpu", is: vkflow.ErrNoDevice},
		{name: "zero compute queues", opts: []vkflow.Option{vkflow.WithQueues(0, false)}, is: vkflow.ErrInvalid},
		// A negative bound would fail every bounded wait at once: each GPU
		// zero fill, hence every Storage tensor, and Close.
		{name: "negative close timeout", opts: []vkflow.Option{vkflow.WithCloseTimeout(-time.Second)}, is: vkflow.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("VKFLOW_DEVICE", tt.env)
			m, _, err := testutil.Open(t, tt.opts...)
			if tt.is != nil {
				require.Error(t, err)
				assert.ErrorIs(t, err, tt.is)
				return
			}
			require.NoError(t, err)
			if tt.want != "*" {
				assert.Equal(t, tt.want, m.Device().Name)
			}
			assert.True(t, m.Device().Usable)
		})
	}
}

func TestQueueMapping(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithQueues(3, true))
	qs := m.Queues()
	require.Len(t, qs, 4, "3 compute + 1 transfer logical queues")
	for i, q := range qs {
		assert.Equal(t, i, q.Logical)
		assert.Less(t, q.Physical, m.Runtime().PhysicalQueues())
	}
	assert.True(t, qs[3].Transfer)
	// Every logical queue works, and they share lavapipe's one queue.
	ctx := context.Background()
	a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	out, err := tensor.New(m, tensor.Float32, []int{4})
	require.NoError(t, err)
	mul, err := kernels.Multiply(m, a, a, out)
	require.NoError(t, err)
	for i := range qs {
		seq, err := sequence.New(m, i)
		require.NoError(t, err)
		require.NoError(t, seq.Dispatch(mul).SyncLocal(out).Eval(ctx), "queue %d", i)
	}
	got, err := out.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 4, 9, 16}, got)
	_, err = sequence.New(m, len(qs))
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
}

func TestFeatures(t *testing.T) {
	m, _ := testutil.Manager(t)
	f := m.Features()
	assert.True(t, f.TimelineSemaphore)
	have := m.Device().Features
	assert.Empty(t, have.Missing(f), "only supported features are enabled")

	asked := vk.Features{TimelineSemaphore: true, BufferDeviceAddress: true, ShaderFloat64: true}
	m2, _, err := testutil.Open(t, vkflow.WithFeatures(asked))
	if !have.BufferDeviceAddress || !have.ShaderFloat64 {
		assert.ErrorIs(t, err, vkflow.ErrUnsupported)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, asked, m2.Features(), "exactly the features asked for")
}

func TestCloseIsIdempotentAndCascades(t *testing.T) {
	m, _ := testutil.Manager(t)
	a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	require.NoError(t, err)
	mul, err := kernels.Multiply(m, a, a, a)
	require.NoError(t, err)
	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	seq.Dispatch(mul)
	require.NoError(t, seq.Eval(context.Background()))
	stats := m.MemStats()
	assert.Positive(t, stats.Allocations)

	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	assert.Nil(t, m.Runtime())
	for _, err := range []error{
		seq.Eval(context.Background()),
		mul.Bind(a, a, a),
		tensor.Write(a, []float32{1, 2, 3, 4}),
		func() error { _, err := tensor.New(m, tensor.Float32, []int{1}); return err }(),
		func() error { _, err := sequence.New(m, 0); return err }(),
		func() error { _, err := kernels.Multiply(m, a, a, a); return err }(),
	} {
		assert.True(t, errors.Is(err, vkflow.ErrClosed), "got %v", err)
	}
	// Close on objects after the Manager closed them is still fine.
	assert.NoError(t, seq.Close())
	assert.NoError(t, mul.Close())
	assert.NoError(t, a.Close())
}

func TestValidationIsLiveAndLogged(t *testing.T) {
	// A broken pipeline-cache-free check: the hook sees messages from the
	// layer. Creating a buffer of size 0 is invalid usage the layer reports.
	m, layer := testutil.Manager(t)
	layer.Expect("VUID-VkBufferCreateInfo-size")
	buf, err := m.Runtime().VK.CreateBuffer(0, vk.BufferUsageStorage)
	if err == nil {
		m.Runtime().VK.DestroyBuffer(buf)
	}
	msgs := layer.Messages()
	require.NotEmpty(t, msgs, "the validation layer reports a zero-size buffer")
	assert.Contains(t, msgs[0].ID, "VUID-VkBufferCreateInfo-size")
}
