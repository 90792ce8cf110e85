// Package fft holds the discrete Fourier transforms of the array API's
// fft extension: fft, ifft, rfft, irfft, hfft and ihfft along one axis,
// and fftn, ifftn, rfftn and irfftn over several, with NumPy's lengths
// (n, s), axes and norm ("backward", "ortho", "forward").
//
// A length whose prime factors are 2, 3, 5 and 7 is split into Stockham
// radix passes (16, 8, 4, 2, 7, 5, 3) with twiddle tables made on the
// host in float64; any other length goes through Bluestein's chirp-z
// transform. Each transform registers, with its schema and its VJP (the
// adjoint transform, grad.go), in the ops registry when the package is
// linked (package ops imports it).
package fft
