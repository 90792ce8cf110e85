package shaders

import (
	"embed"
	"io/fs"
)

// files holds every committed SPIR-V blob, keyed by file name.
//
//go:embed *.spv
var files embed.FS

// FS returns the embedded SPIR-V files, named X.spv after their X.comp
// sources, at the root of the file system.
func FS() fs.FS { return files }

// The variables below hold the SPIR-V of each shader, little-endian words as
// glslc wrote them. Each is embedded by name, so a missing file fails the
// build rather than leaving a nil slice. Callers must not modify them.
var (
	// Mul computes o[i] = a[i] * b[i] over floats. Local size 64; set 0,
	// binding 0 a (read-only), 1 b (read-only), 2 o (write-only); the
	// length of o sets the element count. No push constants.
	//
	//go:embed mul.spv
	Mul []byte

	// MulVec4 is Mul over vec4 elements, local size 256.
	//
	//go:embed mul_vec4.spv
	MulVec4 []byte

	// Add computes o[i] = a[i] + b[i] over floats, with the interface of
	// Mul.
	//
	//go:embed add.spv
	Add []byte

	// AddVec4 is Add over vec4 elements, local size 256.
	//
	//go:embed add_vec4.spv
	AddVec4 []byte

	// Saxpy computes y := alpha*x + y over floats. Local size 64; set 0,
	// binding 0 x (read-only), 1 y (read-write); the length of y sets the
	// element count. Push constants: float alpha (4 bytes).
	//
	//go:embed saxpy.spv
	Saxpy []byte

	// LogRegGrad is pass 1 of a full-batch gradient-descent step of
	// logistic regression: each workgroup of 256 invocations sums the
	// gradient and loss over its block of 4096 samples (16 per invocation).
	// Dispatch ceil(m/4096) workgroups. Set 0, binding 0 x (m×d floats,
	// row-major, read-only), 1 y (m labels 0/1, read-only), 2 w (d weights,
	// read-only), 3 b (bias, 1 float, read-only), 4 partial (18 floats per
	// workgroup: d gradient sums from 0, the bias gradient sum at 16, the
	// loss sum at 17; write-only). Push constants: uint m, uint d (8 bytes).
	// d must be at most 16.
	//
	//go:embed logreg_grad.spv
	LogRegGrad []byte

	// LogRegUpdate is pass 2: one workgroup of 256 sums the partial slots
	// of LogRegGrad and updates w and b. Dispatch (1, 1, 1). Set 0,
	// binding 0 partial (read-only), 1 w (read-write), 2 b (read-write),
	// 3 loss (1 float, write-only: mean binary cross-entropy before the
	// update). Push constants: uint m, uint d, float lr, uint groups
	// (16 bytes).
	//
	//go:embed logreg_update.spv
	LogRegUpdate []byte

	// Raster rasterizes one batch of triangles into an RGBA layer, one
	// invocation per pixel; the last covering triangle of the batch wins,
	// tested with exact fixed-point edge functions at pixel centres. Local
	// size 16×16: dispatch (ceil(width/16), ceil(height/16), 1). Set 0,
	// binding 0 tri (3 vec4 per triangle: (x0, y0, x1, y1), (x2, y2, -, -),
	// (r, g, b, a), vertices in pixels, multiples of 1/16 in [0, 1024];
	// read-only), 1 batch (1 float: the batch index k, rasterizing triangles
	// k*count to k*count+count-1; read-only), 2 layer (width*height vec4,
	// row-major: colour and alpha of the winning triangle, or zero;
	// write-only). Push constants: uint width, uint height, uint count
	// (12 bytes).
	//
	//go:embed raster.spv
	Raster []byte

	// Blend composites a layer over an image in place with the "over"
	// operator: dst.rgb = src.rgb*src.a + dst.rgb*(1-src.a), dst.a = src.a +
	// dst.a*(1-src.a), so dst accumulates premultiplied RGBA. Local size
	// 256, one invocation per pixel; set 0, binding 0 src (vec4 per pixel,
	// straight alpha; read-only), 1 dst (vec4 per pixel; read-write); the
	// length of dst sets the pixel count. No push constants.
	//
	//go:embed blend.spv
	Blend []byte
)
