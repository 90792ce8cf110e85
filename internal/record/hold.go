package record

import (
	"fmt"

	"github.com/vkflow/vkflow/algorithm"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Hold checks the tensors and the algorithm (nil for none) that an
// operation being recorded uses, and takes a reference on each, tensors
// first, so that a Close racing the recording cannot free what the
// recording reads (allocations, buffers, bindings). It fails, holding
// nothing, for a nil one, one of another device, or one already closed
// (ErrClosed). The caller releases the returned objects, or keeps them
// for as long as what it recorded uses them.
func Hold(d *core.Device, ts []*tensor.Tensor, a *algorithm.Algorithm) ([]*core.Object, error) {
	objs := make([]*core.Object, 0, len(ts)+1)
	fail := func(err error) ([]*core.Object, error) {
		Release(objs)
		return nil, err
	}
	for i, t := range ts {
		switch {
		case t == nil:
			return fail(core.Invalid("tensor %d is nil", i))
		case t.Object().Device() != d:
			return fail(core.Invalid("tensor %d belongs to another Manager", i))
		case !t.Object().TryAcquire():
			return fail(core.Closed(fmt.Sprintf("tensor %d", i)))
		}
		objs = append(objs, t.Object())
	}
	if a != nil {
		switch {
		case a.Object().Device() != d:
			return fail(core.Invalid("algorithm belongs to another Manager"))
		case !a.Object().TryAcquire():
			return fail(core.Closed("algorithm"))
		}
		objs = append(objs, a.Object())
	}
	return objs, nil
}

// Release drops the references Hold took.
func Release(objs []*core.Object) {
	for _, o := range objs {
		o.Release()
	}
}
