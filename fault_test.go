package vkflow_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/internal/fault"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// closer collects what a workload creates, to close it afterwards.
type closer []interface{ Close() error }

func (c *closer) add(x interface{ Close() error }) { *c = append(*c, x) }

func (c closer) close() {
	for i := len(c) - 1; i >= 0; i-- {
		c[i].Close()
	}
}

// faultWorkload touches every injectable call site: tensors of each kind,
// staged upload and download, algorithm creation, Eval, Submit with a
// timeline, a host wait and a DLPack export. It stops at the first error.
func faultWorkload(m *vkflow.Manager, c *closer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, kind := range []tensor.Memory{tensor.Device, tensor.Host, tensor.Storage} {
		t, err := tensor.New(m, tensor.Float32, []int{256}, tensor.In(kind))
		if err != nil {
			return err
		}
		c.add(t)
	}
	// Over half a block: a dedicated allocation.
	big, err := tensor.New(m, tensor.Float32, []int{9 << 20}, tensor.In(tensor.Host))
	if err != nil {
		return err
	}
	c.add(big)
	a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
	if err != nil {
		return err
	}
	c.add(a)
	b, err := tensor.FromSlice(m, []float32{5, 6, 7, 8})
	if err != nil {
		return err
	}
	c.add(b)
	out, err := tensor.New(m, tensor.Float32, []int{4})
	if err != nil {
		return err
	}
	c.add(out)
	mul, err := kernels.Multiply(m, a, b, out)
	if err != nil {
		return err
	}
	c.add(mul)
	seq, err := sequence.New(m, 0)
	if err != nil {
		return err
	}
	c.add(seq)
	if err := seq.SyncDevice(a, b).Dispatch(mul).SyncLocal(out).Eval(ctx); err != nil {
		return err
	}
	got, err := out.Float32s()
	if err != nil {
		return err
	}
	if fmt.Sprint(got) != "[5 12 21 32]" {
		return fmt.Errorf("wrong result %v", got)
	}
	tl, err := timeline.New(m, 0)
	if err != nil {
		return err
	}
	c.add(tl)
	if err := seq.Submit(ctx, sequence.Signal(tl, 1)).Wait(ctx); err != nil {
		return err
	}
	if err := tl.Wait(ctx, 1); err != nil {
		return err
	}
	exp, err := dlpack.Export(ctx, out, dlpack.Options{})
	if err != nil {
		return err
	}
	exp.Delete()
	return nil
}

// TestFaultInjection fails each injectable Vulkan call at each of its call
// sites in the workload in turn. Each failure must surface as a typed error
// naming the call and result; everything created must be freed; Close must
// succeed with the validation layer silent.
func TestFaultInjection(t *testing.T) {
	cases := []struct {
		call   fault.Call
		result vk.Result
	}{
		{fault.AllocateMemory, vk.ErrorOutOfDeviceMemory},
		{fault.MapMemory, vk.ErrorMemoryMapFailed},
		{fault.CreateComputePipelines, vk.ErrorOutOfHostMemory},
		{fault.QueueSubmit, vk.ErrorOutOfDeviceMemory},
		{fault.QueueSubmit, vk.ErrorDeviceLost},
		{fault.WaitSemaphores, vk.ErrorDeviceLost},
	}
	// Count each call's sites in a clean run.
	var counts [fault.NumCalls]int
	var ring int // the staging ring's buffer stays until Close
	{
		m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
		var c closer
		fault.Start()
		err := faultWorkload(m, &c)
		fault.Stop()
		c.close()
		require.NoError(t, err)
		ring = m.MemStats().Allocations
		for k := fault.Call(0); k < fault.NumCalls; k++ {
			counts[k] = fault.Calls(k)
			t.Logf("%v: %d calls", k, counts[k])
		}
	}
	for _, tc := range cases {
		require.NotZero(t, counts[tc.call], "the workload makes no %v call", tc.call)
		for n := 1; n <= counts[tc.call]; n++ {
			t.Run(fmt.Sprintf("%v/%v/%d", tc.call, tc.result, n), func(t *testing.T) {
				m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
				var c closer
				fault.Start()
				defer fault.Stop()
				fault.Fail(tc.call, n, int32(tc.result), false)
				err := faultWorkload(m, &c)
				fired := fault.Fired(tc.call)
				fault.Stop()
				if fired == 0 {
					t.Skipf("call %d of %v not reached", n, tc.call)
				}
				require.Error(t, err, "an injected %v failure was swallowed", tc.call)
				var ve *vk.Error
				require.True(t, errors.As(err, &ve), "untyped error: %v", err)
				assert.Equal(t, tc.call.String(), ve.Call, "%v", err)
				assert.Equal(t, tc.result, ve.Result, "%v", err)
				lost := tc.result == vk.ErrorDeviceLost
				if lost {
					// Sticky: every later call fails with ErrDeviceLost.
					_, err := tensor.New(m, tensor.Float32, []int{4})
					assert.ErrorIs(t, err, vkflow.ErrDeviceLost)
					_, err = sequence.New(m, 0)
					assert.ErrorIs(t, err, vkflow.ErrDeviceLost)
				}
				c.close()
				if !lost {
					assert.LessOrEqual(t, m.MemStats().Allocations, ring, "live allocations after closing everything")
				}
				require.NoError(t, m.Close())
				assert.Zero(t, m.MemStats().Allocations, "live allocations after Close")
			})
		}
	}
}

// TestDeviceLost injects VK_ERROR_DEVICE_LOST at vkQueueSubmit and at
// vkWaitSemaphores: the Manager then fails every call with ErrDeviceLost,
// and Close still succeeds and frees everything.
func TestDeviceLost(t *testing.T) {
	for _, call := range []fault.Call{fault.QueueSubmit, fault.WaitSemaphores} {
		t.Run(call.String(), func(t *testing.T) {
			m, _ := testutil.Manager(t, vkflow.WithStagedDeviceMemory())
			ctx := context.Background()
			a, err := tensor.FromSlice(m, []float32{1, 2, 3, 4})
			require.NoError(t, err)
			h, err := tensor.New(m, tensor.Float32, []int{4}, tensor.In(tensor.Host))
			require.NoError(t, err)
			mul, err := kernels.Multiply(m, a, a, h)
			require.NoError(t, err)
			seq, err := sequence.New(m, 0)
			require.NoError(t, err)
			seq.Dispatch(mul)
			tl, err := timeline.New(m, 0)
			require.NoError(t, err)

			fault.Start()
			fault.Fail(call, 1, int32(vk.ErrorDeviceLost), false)
			err = seq.Eval(ctx)
			fault.Stop()
			require.Equal(t, 1, fault.Fired(call))
			require.ErrorIs(t, err, vkflow.ErrDeviceLost)
			var ve *vk.Error
			require.ErrorAs(t, err, &ve)
			assert.Equal(t, call.String(), ve.Call)

			// Sticky, although the real device is fine.
			later := map[string]error{
				"Eval":       seq.Eval(ctx),
				"Submit":     seq.Submit(ctx, sequence.Signal(tl, 1)).Wait(ctx),
				"Signal":     tl.Signal(2),
				"Wait":       tl.Wait(ctx, 0+1),
				"Write":      tensor.Write(a, []float32{0, 0, 0, 0}),
				"Write host": tensor.Write(h, []float32{0, 0, 0, 0}),
			}
			_, later["Float32s"] = a.Float32s()
			_, later["Value"] = tl.Value()
			_, later["tensor.New"] = tensor.New(m, tensor.Float32, []int{4})
			_, later["FromSlice"] = tensor.FromSlice(m, []float32{1})
			_, later["sequence.New"] = sequence.New(m, 0)
			_, later["timeline.New"] = timeline.New(m, 0)
			_, later["kernels.Multiply"] = kernels.Multiply(m, a, a, h)
			for name, err := range later {
				assert.ErrorIs(t, err, vkflow.ErrDeviceLost, name)
			}
			// Closing objects works and frees nothing yet: the GPU state is
			// unknown until Close idles the device.
			require.NoError(t, a.Close())
			require.NoError(t, seq.Close())
			require.NoError(t, m.Close())
			assert.Zero(t, m.MemStats().Allocations)
			require.NoError(t, m.Close())
		})
	}
}

// A submit that fails in vkQueueSubmit never signals; its timeline must not
// stay "pending" for ever. Its value fails (package timeline, Failures):
// the submit held on it fails at once with the same cause, and the
// timeline, whose failure is sticky, takes no host signal. (Before issue
// 22 the consumer stayed held and the host could signal past the burned
// value to release it.)
func TestFailedSubmitReleasesTimeline(t *testing.T) {
	m, _ := testutil.Manager(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tl, err := timeline.New(m, 0)
	require.NoError(t, err)
	defer tl.Close()
	producer, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer producer.Close()
	consumer, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer consumer.Close()

	// The consumer is held until 1 is promised.
	waiting := consumer.Submit(ctx, sequence.Wait(tl, 1))
	fault.Start()
	fault.Fail(fault.QueueSubmit, 1, int32(vk.ErrorOutOfDeviceMemory), false)
	failed := producer.Submit(ctx, sequence.Signal(tl, 1))
	fault.Stop()
	err = failed.Wait(ctx)
	var vkErr *vk.Error
	require.ErrorAs(t, err, &vkErr, "the injected vkQueueSubmit failure")
	err = waiting.Wait(ctx)
	assert.ErrorIs(t, err, vkflow.ErrFailed, "the consumer fails with its producer")
	assert.ErrorIs(t, err, vk.ErrOutOfDeviceMemory)
	assert.ErrorIs(t, tl.Signal(2), vkflow.ErrFailed, "a failed timeline takes no host signal")
	assert.ErrorIs(t, tl.Wait(ctx, 1), vkflow.ErrFailed)
	v, err := tl.Value()
	require.NoError(t, err)
	assert.Equal(t, uint64(0), v)
}
