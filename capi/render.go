package main

// The soft rasterizer (package ops/render): a render recorded on a tape.

/*
#include "vkflow.h"
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/ops/render"
)

// renderOptions is vkflow_soft_render's options_json.
type renderOptions struct {
	Height      int      `json:"height"`
	Width       int      `json:"width"`
	Sigma       *float64 `json:"sigma"` // nil: left out (1)
	Batch       int      `json:"batch"`
	RasterQueue int      `json:"raster_queue"`
	BlendQueue  int      `json:"blend_queue"`
}

//export vkflow_soft_render
func vkflow_soft_render(h C.vkflow_tape, tri, rgba C.vkflow_tensor, optionsJSON *C.char, out *C.vkflow_tensor) C.int {
	tp, err := lookup[*ops.Tape](h, "tape")
	if err != nil {
		return fail(err)
	}
	if optionsJSON == nil || out == nil {
		return invalid("vkflow_soft_render: NULL options or out")
	}
	var o renderOptions
	dec := json.NewDecoder(bytes.NewReader([]byte(C.GoString(optionsJSON))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return invalid("vkflow_soft_render: options %q: %v", C.GoString(optionsJSON), err)
	}
	sigma := 0.0 // render.Options' default, 1
	if o.Sigma != nil {
		if sigma = *o.Sigma; sigma == 0 {
			return invalid("vkflow_soft_render: sigma is 0: want a width > 0, in pixels")
		}
	}
	ts, err := opTensors("inputs", &[]C.vkflow_tensor{tri, rgba}[0], 2, false)
	if err != nil {
		return fail(err)
	}
	img, err := render.SoftRender(tp, ts[0], ts[1], render.Options{Height: o.Height, Width: o.Width, Sigma: sigma,
		Batch: o.Batch, RasterQueue: o.RasterQueue, BlendQueue: o.BlendQueue})
	if err != nil {
		return fail(fmt.Errorf("vkflow_soft_render: %w", err))
	}
	*out = newHandle(img)
	return C.VKFLOW_OK
}
