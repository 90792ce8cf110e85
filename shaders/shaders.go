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

	// LogReg runs one full-batch gradient-descent step of logistic
	// regression in a single workgroup of 256 invocations: dispatch
	// (1, 1, 1). Set 0, binding 0 x (m×d floats, row-major, read-only),
	// 1 y (m labels 0/1, read-only), 2 w (d weights, read-write), 3 b
	// (bias, 1 float, read-write), 4 loss (1 float, write-only: mean binary
	// cross-entropy before the update). Push constants: uint m, uint d,
	// float lr (12 bytes). d must be at most 16.
	//
	//go:embed logreg.spv
	LogReg []byte
)
