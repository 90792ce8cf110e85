package fft_test

import "github.com/vkflow/vkflow/ops/internal/opstest"

// numelOf is shared with the other op packages' tests (internal/opstest).
var numelOf = opstest.NumelOf
