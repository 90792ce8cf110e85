// Deprecated forwards of the Fourier transforms, moved to package ops/fft.

package ops

import (
	"github.com/vkflow/vkflow/ops/fft"
	"github.com/vkflow/vkflow/tensor"
)

// FFT is fft.FFT.
//
// Deprecated: use fft.FFT (package github.com/vkflow/vkflow/ops/fft).
func FFT(o Owner, x *tensor.Tensor, n int, axis int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.FFT(o, x, n, axis, norm, out)
}

// FFTN is fft.FFTN.
//
// Deprecated: use fft.FFTN (package github.com/vkflow/vkflow/ops/fft).
func FFTN(o Owner, x *tensor.Tensor, s []int, axes []int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.FFTN(o, x, s, axes, norm, out)
}

// HFFT is fft.HFFT.
//
// Deprecated: use fft.HFFT (package github.com/vkflow/vkflow/ops/fft).
func HFFT(o Owner, x *tensor.Tensor, n int, axis int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.HFFT(o, x, n, axis, norm, out)
}

// IFFT is fft.IFFT.
//
// Deprecated: use fft.IFFT (package github.com/vkflow/vkflow/ops/fft).
func IFFT(o Owner, x *tensor.Tensor, n int, axis int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.IFFT(o, x, n, axis, norm, out)
}

// IFFTN is fft.IFFTN.
//
// Deprecated: use fft.IFFTN (package github.com/vkflow/vkflow/ops/fft).
func IFFTN(o Owner, x *tensor.Tensor, s []int, axes []int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.IFFTN(o, x, s, axes, norm, out)
}

// IHFFT is fft.IHFFT.
//
// Deprecated: use fft.IHFFT (package github.com/vkflow/vkflow/ops/fft).
func IHFFT(o Owner, x *tensor.Tensor, n int, axis int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.IHFFT(o, x, n, axis, norm, out)
}

// IRFFT is fft.IRFFT.
//
// Deprecated: use fft.IRFFT (package github.com/vkflow/vkflow/ops/fft).
func IRFFT(o Owner, x *tensor.Tensor, n int, axis int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.IRFFT(o, x, n, axis, norm, out)
}

// IRFFTN is fft.IRFFTN.
//
// Deprecated: use fft.IRFFTN (package github.com/vkflow/vkflow/ops/fft).
func IRFFTN(o Owner, x *tensor.Tensor, s []int, axes []int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.IRFFTN(o, x, s, axes, norm, out)
}

// RFFT is fft.RFFT.
//
// Deprecated: use fft.RFFT (package github.com/vkflow/vkflow/ops/fft).
func RFFT(o Owner, x *tensor.Tensor, n int, axis int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.RFFT(o, x, n, axis, norm, out)
}

// RFFTN is fft.RFFTN.
//
// Deprecated: use fft.RFFTN (package github.com/vkflow/vkflow/ops/fft).
func RFFTN(o Owner, x *tensor.Tensor, s []int, axes []int, norm string, out *tensor.Tensor) (*Op, error) {
	return fft.RFFTN(o, x, s, axes, norm, out)
}
