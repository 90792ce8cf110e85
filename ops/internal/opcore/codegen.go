package opcore

import (
	"fmt"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// Kernels are GLSL compute shaders generated per dtype and compiled at run
// time (package glsl, cached by source hash). These helpers give every
// kernel the same conventions:
//
//   - header(dtypes...) opens the source: #version and the extensions the
//     dtypes need in storage buffers and in arithmetic;
//   - storage types (glslType) are what buffers hold; compute types
//     (computeType) are what arithmetic uses: float16 computes in float32
//     and rounds once on store, which gives the correctly rounded float16
//     result for each op; 8- and 16-bit integers compute in 32 bits and
//     wrap on store, as NumPy's do; bool is a uint8_t of 0 or 1;
//   - complex64 and complex128 are vec2 and dvec2 (real, imaginary) in
//     buffers and in arithmetic (complex.go);
//   - one invocation per element, in groups of localSize, over a grid that
//     goes 2-D past maxComputeWorkGroupCount[0] (grid); GLSL gets the flat
//     index from indexGLSL's gid().

// LocalSize is the workgroup size of the element-wise kernels.
const LocalSize = 256

// GLSLType returns the GLSL type a buffer of dt holds.
func GLSLType(dt tensor.Dtype) string {
	switch dt {
	case tensor.Float16:
		return "float16_t"
	case tensor.Float32:
		return "float"
	case tensor.Float64:
		return "double"
	case tensor.Int8:
		return "int8_t"
	case tensor.Int16:
		return "int16_t"
	case tensor.Int32:
		return "int"
	case tensor.Int64:
		return "int64_t"
	case tensor.Uint8, tensor.Bool:
		return "uint8_t"
	case tensor.Uint16:
		return "uint16_t"
	case tensor.Uint32:
		return "uint"
	case tensor.Uint64:
		return "uint64_t"
	case tensor.Complex64:
		return "vec2"
	case tensor.Complex128:
		return "dvec2"
	}
	return "invalid"
}

// ComputeType returns the GLSL type arithmetic on dt uses.
func ComputeType(dt tensor.Dtype) string {
	switch dt {
	case tensor.Float16, tensor.Float32:
		return "float"
	case tensor.Float64:
		return "double"
	case tensor.Int8, tensor.Int16, tensor.Int32:
		return "int"
	case tensor.Int64:
		return "int64_t"
	case tensor.Uint8, tensor.Uint16, tensor.Uint32, tensor.Bool:
		return "uint"
	case tensor.Uint64:
		return "uint64_t"
	case tensor.Complex64:
		return "vec2"
	case tensor.Complex128:
		return "dvec2"
	}
	return "invalid"
}

// IsFloat reports whether dt is a floating-point dtype.
func IsFloat(dt tensor.Dtype) bool {
	return dt == tensor.Float16 || dt == tensor.Float32 || dt == tensor.Float64
}

// isSigned reports whether dt is a signed integer dtype.
func isSigned(dt tensor.Dtype) bool {
	return dt == tensor.Int8 || dt == tensor.Int16 || dt == tensor.Int32 || dt == tensor.Int64
}

// isUnsigned reports whether dt is an unsigned integer dtype (not bool).
func isUnsigned(dt tensor.Dtype) bool {
	return dt == tensor.Uint8 || dt == tensor.Uint16 || dt == tensor.Uint32 || dt == tensor.Uint64
}

// Header returns the first lines of a kernel over dtypes: #version 450
// and the extensions for their storage and arithmetic types.
func Header(dtypes ...tensor.Dtype) string {
	var b strings.Builder
	b.WriteString("#version 450\n")
	seen := map[string]bool{}
	ext := func(names ...string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				fmt.Fprintf(&b, "#extension %s : require\n", n)
			}
		}
	}
	for _, dt := range dtypes {
		switch dt {
		case tensor.Float16:
			ext("GL_EXT_shader_16bit_storage", "GL_EXT_shader_explicit_arithmetic_types_float16")
		case tensor.Int16, tensor.Uint16:
			ext("GL_EXT_shader_16bit_storage", "GL_EXT_shader_explicit_arithmetic_types_int16")
		case tensor.Int8, tensor.Uint8, tensor.Bool:
			ext("GL_EXT_shader_8bit_storage", "GL_EXT_shader_explicit_arithmetic_types_int8")
		case tensor.Int64, tensor.Uint64:
			ext("GL_EXT_shader_explicit_arithmetic_types_int64")
		}
	}
	return b.String()
}

// RequireDtypes fails with ErrUnsupported, naming the dtype and the
// feature, when the device was opened without what dtypes need in
// kernels. Storage features are checked when tensors are made; arithmetic
// needs these too.
func (op *Op) RequireDtypes(dtypes ...tensor.Dtype) error {
	f := op.dev.Features
	for _, dt := range dtypes {
		var name string
		ok := true
		switch dt {
		case tensor.Float16:
			name, ok = "shaderFloat16 and storageBuffer16BitAccess", f.ShaderFloat16 && f.StorageBuffer16BitAccess
		case tensor.Int16, tensor.Uint16:
			name, ok = "shaderInt16 and storageBuffer16BitAccess", f.ShaderInt16 && f.StorageBuffer16BitAccess
		case tensor.Int8, tensor.Uint8, tensor.Bool:
			name, ok = "shaderInt8 and storageBuffer8BitAccess", f.ShaderInt8 && f.StorageBuffer8BitAccess
		case tensor.Float64, tensor.Complex128:
			name, ok = "shaderFloat64", f.ShaderFloat64
		case tensor.Int64, tensor.Uint64:
			name, ok = "shaderInt64", f.ShaderInt64
		}
		if !ok {
			return core.Unsupported("ops.%s: %v needs %s, which %s was opened without", op.name, dt, name, op.dev.Info.Name)
		}
	}
	return nil
}

// Unsupported returns the error for a dtype an op does not take.
func (op *Op) Unsupported(dt tensor.Dtype, want string) error {
	return core.Invalid("ops.%s: dtype %v is not supported (supported: %s)", op.name, dt, want)
}

// IndexGLSL defines gid(): the flat index of this invocation over a grid
// made by grid().
const IndexGLSL = `uint gid() {
	return gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * (gl_NumWorkGroups.x * gl_WorkGroupSize.x);
}
`

// Grid returns the workgroups that cover n invocations in groups of
// local: one row of up to maxComputeWorkGroupCount[0] groups, then more
// rows. Invocations past n must return early (gid() >= n).
func (op *Op) Grid(n uint64, local uint32) ([3]uint32, error) {
	groups := (n + uint64(local) - 1) / uint64(local)
	if groups == 0 {
		return [3]uint32{0, 0, 0}, nil
	}
	lim := op.dev.Info.Limits.MaxComputeWorkGroupCount
	x := min(groups, uint64(lim[0]))
	y := (groups + x - 1) / x
	if y > uint64(lim[1]) || x*uint64(local)*y > 1<<32 {
		return [3]uint32{}, op.Errorf("%d invocations exceed the device's dispatch limits", n)
	}
	return [3]uint32{uint32(x), uint32(y), 1}, nil
}
