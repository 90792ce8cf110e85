package opcore

import (
	"context"
	"fmt"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Dynamic ops: ops whose outputs' shapes depend on their inputs' values
// (nonzero), as in the array API standard's data-dependent output shapes.
// Such an op cannot be prepared once and recorded: it runs on a Stream as
// steps it queues there (each an op prepared and cached as any), reading
// a count back to the host between them to size its outputs. Only that
// count reaches the host; the data stays on the GPU. Stream.Call and Call
// run them by name (and so the C API and Python); Prepare refuses them.

// dynamicFunc runs a dynamic op on s and returns its outputs (given, or
// allocated: the caller owns them).
type dynamicFunc func(s *Stream, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error)

// dynamicOps is filled by init functions only, and read-only afterwards.
var dynamicOps = map[string]dynamicFunc{}

// dynamic registers the dynamic op name; init functions call it.
func dynamic(name string, f dynamicFunc) {
	dynamicOps[name] = f
	Builtin(name, func(Owner, []*tensor.Tensor, []*tensor.Tensor, Attrs) (*Op, error) {
		return nil, core.Invalid("ops.%s: its output's shape depends on its input's values, so it "+
			"cannot be prepared: call it (ops.Call, Stream.Call)", name)
	})
}

// dynamicOp returns the dynamic op name, or nil.
func dynamicOp(name string) dynamicFunc { return dynamicOps[name] }

// callDynamic is Call of a dynamic op: on o's default stream, waiting for
// the outputs.
func callDynamic(ctx context.Context, o Owner, name string, f dynamicFunc, in, out []*tensor.Tensor, at Attrs) ([]*tensor.Tensor, error) {
	s, err := DefaultStream(o)
	if err != nil {
		return nil, fmt.Errorf("ops.%s: %w", name, err)
	}
	outs, err := f(s, in, out, at)
	if err != nil {
		return nil, err
	}
	for _, t := range outs {
		if err = t.Wait(ctx); err != nil {
			break
		}
	}
	if err != nil {
		for i, t := range outs {
			if OutAt(out, i) == nil {
				_ = t.Close()
			}
		}
		return nil, fmt.Errorf("ops.%s: %w", name, err)
	}
	return outs, nil
}

// readCount waits for t (one uint32, written by a step queued on s) and
// returns it; the wait is bounded by the device's WaitTimeout.
func (s *Stream) readCount(t *tensor.Tensor) (int, error) {
	ctx := core.NewDeadline(s.dev.WaitTimeout) // no timer per call
	defer ctx.Stop()
	if err := t.Wait(ctx); err != nil {
		return 0, err
	}
	v, err := t.Uint32s()
	if err != nil {
		return 0, err
	}
	return int(v[0]), nil
}
