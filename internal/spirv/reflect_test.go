package spirv

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/shaders"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

var (
	ro = func(set, binding uint32) Binding { return Binding{set, binding, StorageBuffer, ReadOnly} }
	wo = func(set, binding uint32) Binding { return Binding{set, binding, StorageBuffer, WriteOnly} }
	rw = func(set, binding uint32) Binding { return Binding{set, binding, StorageBuffer, ReadWrite} }
	ub = func(set, binding uint32) Binding { return Binding{set, binding, UniformBuffer, ReadOnly} }
)

func TestReflectShaders(t *testing.T) {
	noSpec := [3]int32{-1, -1, -1}
	specTestConstants := []SpecConstant{
		{ID: 0, Kind: Uint, Bits: 32}, // local_size_x_id
		{ID: 1, Kind: Float, Bits: 32},
		{ID: 2, Kind: Int, Bits: 32},
		{ID: 3, Kind: Bool, Bits: 32},
	}
	tests := []struct {
		name string
		code []byte
		want Module
	}{
		{"mul", shaders.Mul, Module{
			EntryPoint: "main", LocalSize: [3]uint32{64, 1, 1}, LocalSizeSpecIDs: noSpec,
			Bindings: []Binding{ro(0, 0), ro(0, 1), wo(0, 2)},
		}},
		{"mul_vec4", shaders.MulVec4, Module{
			EntryPoint: "main", LocalSize: [3]uint32{256, 1, 1}, LocalSizeSpecIDs: noSpec,
			Bindings: []Binding{ro(0, 0), ro(0, 1), wo(0, 2)},
		}},
		{"add", shaders.Add, Module{
			EntryPoint: "main", LocalSize: [3]uint32{64, 1, 1}, LocalSizeSpecIDs: noSpec,
			Bindings: []Binding{ro(0, 0), ro(0, 1), wo(0, 2)},
		}},
		{"add_vec4", shaders.AddVec4, Module{
			EntryPoint: "main", LocalSize: [3]uint32{256, 1, 1}, LocalSizeSpecIDs: noSpec,
			Bindings: []Binding{ro(0, 0), ro(0, 1), wo(0, 2)},
		}},
		{"saxpy", shaders.Saxpy, Module{
			EntryPoint: "main", LocalSize: [3]uint32{64, 1, 1}, LocalSizeSpecIDs: noSpec,
			Bindings:         []Binding{ro(0, 0), rw(0, 1)},
			PushConstantSize: 4,
		}},
		{"logreg_grad", shaders.LogRegGrad, Module{
			EntryPoint: "main", LocalSize: [3]uint32{256, 1, 1}, LocalSizeSpecIDs: noSpec,
			Bindings:         []Binding{ro(0, 0), ro(0, 1), ro(0, 2), ro(0, 3), wo(0, 4)},
			PushConstantSize: 8,
		}},
		{"logreg_update", shaders.LogRegUpdate, Module{
			EntryPoint: "main", LocalSize: [3]uint32{256, 1, 1}, LocalSizeSpecIDs: noSpec,
			Bindings:         []Binding{ro(0, 0), rw(0, 1), rw(0, 2), wo(0, 3)},
			PushConstantSize: 16,
		}},
		{"testdata/spec.spv (WorkgroupSize spec composite)", readTestdata(t, "spec.spv"), Module{
			EntryPoint: "main", LocalSize: [3]uint32{1, 4, 1}, LocalSizeSpecIDs: [3]int32{0, -1, -1},
			Bindings:         []Binding{rw(0, 0), ub(1, 0)},
			PushConstantSize: 28,
			SpecConstants:    specTestConstants,
		}},
		{"testdata/spec_vk13.spv (LocalSizeId)", readTestdata(t, "spec_vk13.spv"), Module{
			EntryPoint: "main", LocalSize: [3]uint32{1, 4, 1}, LocalSizeSpecIDs: [3]int32{0, -1, -1},
			Bindings:         []Binding{rw(0, 0), ub(1, 0)},
			PushConstantSize: 28,
			SpecConstants:    specTestConstants,
		}},
		{"testdata/layout.spv (BufferBlock, matrices)", readTestdata(t, "layout.spv"), Module{
			EntryPoint: "main", LocalSize: [3]uint32{8, 4, 2}, LocalSizeSpecIDs: noSpec,
			Bindings:         []Binding{wo(0, 1), rw(0, 3), ub(1, 0), ro(2, 5)},
			PushConstantSize: 112,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Reflect(tt.code)
			require.NoError(t, err)
			require.NotNil(t, got)
			assert.Equal(t, tt.want, *got)
		})
	}
}

// words converts a module to words, for editing.
func words(code []byte) []uint32 {
	w := make([]uint32, len(code)/4)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	return w
}

func toBytes(w []uint32) []byte {
	b := make([]byte, 4*len(w))
	for i, x := range w {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// findOp returns the word index of the first instruction with opcode op.
func findOp(t testing.TB, w []uint32, op uint16) int {
	t.Helper()
	for at := headerWords; at < len(w) && w[at]>>16 != 0; at += int(w[at] >> 16) {
		if uint16(w[at]) == op {
			return at
		}
	}
	t.Fatalf("opcode %d not found", op)
	return 0
}

// edit returns a copy of code with f applied to its words.
func edit(code []byte, f func(w []uint32) []uint32) []byte {
	return toBytes(f(words(code)))
}

func TestReflectErrors(t *testing.T) {
	mul := shaders.Mul
	tests := []struct {
		name string
		code func(t *testing.T) []byte
		msg  string
	}{
		{"nil", func(*testing.T) []byte { return nil }, "empty SPIR-V"},
		{"empty", func(*testing.T) []byte { return []byte{} }, "empty SPIR-V"},
		{"3 bytes", func(*testing.T) []byte { return mul[:3] }, "SPIR-V length 3 is not a multiple of 4"},
		{"odd tail", func(*testing.T) []byte { return mul[:len(mul)-1] }, "is not a multiple of 4"},
		{"4 words", func(*testing.T) []byte { return mul[:16] }, "SPIR-V has 4 words, fewer than the 5-word header"},
		{"bad magic", func(*testing.T) []byte {
			return edit(mul, func(w []uint32) []uint32 { w[0] = 0xdeadbeef; return w })
		}, "bad magic number 0xdeadbeef"},
		{"byte-swapped", func(*testing.T) []byte {
			return edit(mul, func(w []uint32) []uint32 {
				for i := range w {
					w[i] = bits.ReverseBytes32(w[i])
				}
				return w
			})
		}, "big-endian SPIR-V is not supported"},
		{"truncated instruction", func(*testing.T) []byte {
			// The first instruction, OpCapability Shader, has 2 words.
			return mul[:4*(headerWords+1)]
		}, "truncated instruction at word 5"},
		{"word count past the end", func(*testing.T) []byte {
			return edit(mul, func(w []uint32) []uint32 {
				w[len(w)-1] = 5<<16 | w[len(w)-1]&0xffff
				return w
			})
		}, "truncated instruction"},
		{"zero word count", func(t *testing.T) []byte {
			return edit(mul, func(w []uint32) []uint32 {
				at := findOp(t, w, opEntryPoint)
				w[at] &= 0xffff
				return w
			})
		}, "truncated instruction at word"},
		{"no compute entry point", func(t *testing.T) []byte {
			return edit(mul, func(w []uint32) []uint32 {
				w[findOp(t, w, opEntryPoint)+1] = 0 // Vertex
				return w
			})
		}, "no GLCompute entry point"},
		{"header only", func(*testing.T) []byte { return mul[:4*headerWords] }, "no GLCompute entry point"},
		{"truncated at an instruction boundary", func(*testing.T) []byte {
			return mul[:len(mul)-4] // drops OpFunctionEnd
		}, "truncated module"},
		{"entry point function missing", func(*testing.T) []byte {
			return newModule().entry(1, "main").op(opExecutionMode, 1, executionModeLocalSize, 1, 1, 1).
				op(opFunction, 0, 2, 0, 0).op(opFunctionEnd).bytes()
		}, "which the module does not define"},
		{"function never ends", func(*testing.T) []byte {
			return newModule().entry(1, "main").op(opExecutionMode, 1, executionModeLocalSize, 1, 1, 1).
				op(opFunction, 0, 1, 0, 0).bytes()
		}, "truncated module"},
		{"unterminated entry point name", func(*testing.T) []byte {
			return newModule().op(opEntryPoint, executionModelGLCompute, 1, 0x6e69616d).bytes()
		}, "name is not terminated"},
		{"short OpDecorate", func(*testing.T) []byte {
			return base().op(opDecorate, 7).bytes()
		}, "OpDecorate at word"},
		{"decoration missing literal", func(*testing.T) []byte {
			return base().op(opDecorate, 7, decorationBinding).bytes()
		}, "has no operand"},
		{"no workgroup size", func(*testing.T) []byte {
			return newModule().entry(1, "main").bytes()
		}, `entry point "main" declares no workgroup size`},
		{"zero workgroup size", func(*testing.T) []byte {
			return newModule().entry(1, "main").op(opExecutionMode, 1, executionModeLocalSize, 0, 1, 1).bytes()
		}, "has a zero component"},
		{"LocalSizeId on a non-constant", func(*testing.T) []byte {
			return newModule().entry(1, "main").op(opExecutionModeID, 1, executionModeLocalSizeID, 50, 50, 50).bytes()
		}, "LocalSizeId operand %50 is not a scalar constant"},
		{"WorkgroupSize not 3 components", func(*testing.T) []byte {
			return base().types().
				op(opConstant, tUint, 40, 8).
				op(opConstantComposite, tVec3, 41, 40, 40).
				op(opDecorate, 41, decorationBuiltIn, builtInWorkgroupSize).bytes()
		}, "is not a 3-component composite"},
		{"push constant member without Offset", func(*testing.T) []byte {
			return base().types().
				op(opTypeStruct, 30, tFloat).
				push(30).bytes()
		}, "member 0 of struct %30 has no Offset"},
		{"push constant runtime array", func(*testing.T) []byte {
			return base().types().
				op(opTypeRuntimeArray, 29, tFloat).
				op(opTypeStruct, 30, 29).
				op(opMemberDecorate, 30, 0, decorationOffset, 0).
				push(30).bytes()
		}, "runtime array %29 has no fixed size"},
		{"push constant struct contains itself", func(*testing.T) []byte {
			return base().types().
				op(opTypeStruct, 30, 30).
				op(opMemberDecorate, 30, 0, decorationOffset, 0).
				push(30).bytes()
		}, "struct %30 contains itself"},
		{"push constant undefined member type", func(*testing.T) []byte {
			return base().types().
				op(opTypeStruct, 30, 99).
				op(opMemberDecorate, 30, 0, decorationOffset, 0).
				push(30).bytes()
		}, "type %99 is not defined"},
		{"push constant too large", func(*testing.T) []byte {
			return base().types().
				op(opConstant, tUint, 40, 0xffffffff).
				op(opTypeArray, 31, tFloat, 40).
				op(opDecorate, 31, decorationArrayStride, 16).
				op(opTypeStruct, 30, 31).
				op(opMemberDecorate, 30, 0, decorationOffset, 0).
				push(30).bytes()
		}, "larger than 4 GiB"},
		{"push constant negative array length", func(*testing.T) []byte {
			return base().types().
				op(opConstant, tInt, 40, 0xffffffff).
				op(opTypeArray, 31, tFloat, 40).
				op(opTypeStruct, 30, 31).
				op(opMemberDecorate, 30, 0, decorationOffset, 0).
				push(30).bytes()
		}, "length of array %31 is out of range"},
		{"push constant array of itself", func(*testing.T) []byte {
			return base().types().
				op(opConstant, tUint, 40, 2).
				op(opTypeArray, 31, 31, 40).
				op(opTypeStruct, 30, 31).
				op(opMemberDecorate, 30, 0, decorationOffset, 0).
				push(30).bytes()
		}, "type %31 nests too deeply"},
		{"descriptor array of itself", func(*testing.T) []byte {
			return base().types().
				op(opConstant, tUint, 40, 2).
				op(opTypeArray, 22, 22, 40).
				op(opTypePointer, 30, storageClassStorageBuffer, 22).
				op(opVariable, 30, 21, storageClassStorageBuffer).
				op(opDecorate, 21, decorationDescriptorSet, 0).
				op(opDecorate, 21, decorationBinding, 0).bytes()
		}, "type of variable %21 nests arrays too deeply"},
		{"push constant bad float width", func(*testing.T) []byte {
			return base().types().
				op(opTypeFloat, 19, 12).
				op(opTypeStruct, 30, 19).
				op(opMemberDecorate, 30, 0, decorationOffset, 0).
				push(30).bytes()
		}, "type %19 has width 12"},
		{"LocalSize too short", func(*testing.T) []byte {
			return newModule().entry(1, "main").op(opExecutionMode, 1, executionModeLocalSize, 4, 4).bytes()
		}, "LocalSize execution mode has 2 operands, want 3"},
		{"LocalSizeId on a float constant", func(*testing.T) []byte {
			return newModule().entry(1, "main").types().
				op(opConstant, tFloat, 40, 0x3f800000).
				op(opExecutionModeID, 1, executionModeLocalSizeID, 40, 40, 40).bytes()
		}, "LocalSizeId operand %40 is not an integer constant"},
		{"WorkgroupSize SpecId out of range", func(*testing.T) []byte {
			return base().types().
				op(opSpecConstant, tUint, 40, 8).
				op(opDecorate, 40, decorationSpecID, 0x80000000).
				op(opConstantComposite, tVec3, 41, 40, 40, 40).
				op(opDecorate, 41, decorationBuiltIn, builtInWorkgroupSize).bytes()
		}, "SpecId 2147483648 of %40 is out of range"},
		{"binding kinds conflict", func(*testing.T) []byte {
			a := base().types()
			a.buffer(20, 21, storageClassStorageBuffer, 0, 0, decorationBlock)
			a.buffer(22, 23, storageClassUniform, 0, 0, decorationBlock)
			return a.bytes()
		}, "set 0 binding 0 is declared as both StorageBuffer and UniformBuffer"},
		{"buffer variable type not a pointer", func(*testing.T) []byte {
			return base().types().
				op(opVariable, tFloat, 21, storageClassStorageBuffer).
				op(opDecorate, 21, decorationDescriptorSet, 0).
				op(opDecorate, 21, decorationBinding, 0).bytes()
		}, "type of variable %21 is not a pointer"},
		{"spec constant of vector type", func(*testing.T) []byte {
			return base().types().
				op(opSpecConstant, tVec3, 40, 1).
				op(opDecorate, 40, decorationSpecID, 9).bytes()
		}, "non-scalar type OpTypeVector"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Reflect(tt.code(t))
			require.Error(t, err)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

// asm assembles small modules by hand. Ids are chosen by the caller; the
// reflector does not care about the logical layout, so instructions may be
// appended in any order.
type asm struct{ w []uint32 }

// Type ids defined by asm.types.
const (
	tUint   = 10
	tFloat  = 11
	tBool   = 12
	tInt    = 13
	tVec3   = 14 // uvec3
	tVec4   = 15 // vec4 of float
	tDouble = 16
	tShort  = 17 // 16-bit signed int
	tMat4   = 18 // 4 columns of vec4
)

func newModule() *asm {
	return &asm{w: []uint32{magic, 0x00010500, 0, 1000, 0}}
}

// base is a module with a GLCompute entry point %1 "main" and LocalSize 1 1 1.
func base() *asm {
	return newModule().entry(1, "main").op(opExecutionMode, 1, executionModeLocalSize, 1, 1, 1)
}

func (a *asm) op(op uint16, args ...uint32) *asm {
	a.w = append(a.w, uint32(len(args)+1)<<16|uint32(op))
	a.w = append(a.w, args...)
	return a
}

func (a *asm) entry(fn uint32, name string) *asm {
	return a.op(opEntryPoint, append([]uint32{executionModelGLCompute, fn}, str(name)...)...)
}

func (a *asm) types() *asm {
	return a.op(opTypeInt, tUint, 32, 0).
		op(opTypeFloat, tFloat, 32).
		op(opTypeBool, tBool).
		op(opTypeInt, tInt, 32, 1).
		op(opTypeVector, tVec3, tUint, 3).
		op(opTypeVector, tVec4, tFloat, 4).
		op(opTypeFloat, tDouble, 64).
		op(opTypeInt, tShort, 16, 1).
		op(opTypeMatrix, tMat4, tVec4, 4)
}

// buffer declares a one-float block struct and a variable of it, bound at
// set/binding, with the given decorations on the struct.
func (a *asm) buffer(structID, varID, storage, set, binding uint32, structDecs ...uint32) *asm {
	ptr := varID + 500
	a.op(opTypeStruct, structID, tFloat).
		op(opMemberDecorate, structID, 0, decorationOffset, 0).
		op(opTypePointer, ptr, storage, structID).
		op(opVariable, ptr, varID, storage).
		op(opDecorate, varID, decorationDescriptorSet, set).
		op(opDecorate, varID, decorationBinding, binding)
	for _, d := range structDecs {
		a.op(opDecorate, structID, d)
	}
	return a
}

// push declares a push constant variable pointing to type id.
func (a *asm) push(id uint32) *asm {
	return a.op(opTypePointer, id+500, storageClassPushConstant, id).
		op(opVariable, id+500, id+600, storageClassPushConstant)
}

// bytes ends the module with an empty function %1 (the entry point of the
// helpers above) unless it already defines one.
func (a *asm) bytes() []byte {
	for at := headerWords; at < len(a.w); at += int(a.w[at] >> 16) {
		if uint16(a.w[at]) == opFunction || a.w[at]>>16 == 0 {
			return toBytes(a.w)
		}
	}
	out := *a
	out.w = append([]uint32(nil), a.w...)
	out.op(opFunction, 0, 1, 0, 0).op(opFunctionEnd)
	return toBytes(out.w)
}

// str packs a nul-terminated string into words.
func str(s string) []uint32 {
	b := append([]byte(s), 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return words(b)
}

func TestReflectBindings(t *testing.T) {
	tests := []struct {
		name  string
		build func(a *asm)
		want  []Binding
	}{
		{"StorageBuffer class, Block", func(a *asm) {
			a.buffer(20, 21, storageClassStorageBuffer, 0, 0, decorationBlock)
		}, []Binding{rw(0, 0)}},
		{"Uniform class, BufferBlock is a storage buffer", func(a *asm) {
			a.buffer(20, 21, storageClassUniform, 0, 0, decorationBufferBlock)
		}, []Binding{rw(0, 0)}},
		{"Uniform class, Block is a uniform buffer", func(a *asm) {
			a.buffer(20, 21, storageClassUniform, 3, 2, decorationBlock)
		}, []Binding{ub(3, 2)}},
		{"NonWritable on the variable", func(a *asm) {
			a.buffer(20, 21, storageClassStorageBuffer, 0, 0, decorationBlock)
			a.op(opDecorate, 21, decorationNonWritable)
		}, []Binding{ro(0, 0)}},
		{"NonReadable on the variable", func(a *asm) {
			a.buffer(20, 21, storageClassStorageBuffer, 0, 0, decorationBlock)
			a.op(opDecorate, 21, decorationNonReadable)
		}, []Binding{wo(0, 0)}},
		{"NonWritable and NonReadable is ReadOnly", func(a *asm) {
			a.buffer(20, 21, storageClassStorageBuffer, 0, 0, decorationBlock)
			a.op(opDecorate, 21, decorationNonReadable)
			a.op(opMemberDecorate, 20, 0, decorationNonWritable)
		}, []Binding{ro(0, 0)}},
		{"only some members NonWritable", func(a *asm) {
			a.op(opTypeStruct, 20, tUint, tFloat).
				op(opDecorate, 20, decorationBlock).
				op(opMemberDecorate, 20, 0, decorationNonWritable).
				op(opTypePointer, 30, storageClassStorageBuffer, 20).
				op(opVariable, 30, 21, storageClassStorageBuffer).
				op(opDecorate, 21, decorationDescriptorSet, 0).
				op(opDecorate, 21, decorationBinding, 4)
		}, []Binding{rw(0, 4)}},
		{"every member NonReadable", func(a *asm) {
			a.op(opTypeStruct, 20, tUint, tFloat).
				op(opDecorate, 20, decorationBlock).
				op(opMemberDecorate, 20, 0, decorationNonReadable).
				op(opMemberDecorate, 20, 1, decorationNonReadable).
				op(opTypePointer, 30, storageClassStorageBuffer, 20).
				op(opVariable, 30, 21, storageClassStorageBuffer).
				op(opDecorate, 21, decorationDescriptorSet, 0).
				op(opDecorate, 21, decorationBinding, 4)
		}, []Binding{wo(0, 4)}},
		{"array of descriptors", func(a *asm) {
			a.op(opTypeStruct, 20, tFloat).
				op(opDecorate, 20, decorationBlock).
				op(opMemberDecorate, 20, 0, decorationNonWritable).
				op(opConstant, tUint, 40, 4).
				op(opTypeArray, 22, 20, 40).
				op(opTypePointer, 30, storageClassStorageBuffer, 22).
				op(opVariable, 30, 21, storageClassStorageBuffer).
				op(opDecorate, 21, decorationDescriptorSet, 1).
				op(opDecorate, 21, decorationBinding, 0)
		}, []Binding{ro(1, 0)}},
		{"sorted by set then binding", func(a *asm) {
			a.buffer(20, 21, storageClassStorageBuffer, 1, 0, decorationBlock)
			a.buffer(22, 23, storageClassStorageBuffer, 0, 7, decorationBlock)
			a.buffer(24, 25, storageClassUniform, 0, 2, decorationBlock)
			a.buffer(26, 27, storageClassStorageBuffer, 1, 1, decorationBlock)
		}, []Binding{ub(0, 2), rw(0, 7), rw(1, 0), rw(1, 1)}},
		{"aliases merge their access", func(a *asm) {
			a.buffer(20, 21, storageClassStorageBuffer, 0, 0, decorationBlock)
			a.op(opDecorate, 21, decorationNonWritable)
			a.buffer(22, 23, storageClassStorageBuffer, 0, 0, decorationBlock)
			a.op(opDecorate, 23, decorationNonReadable)
			a.buffer(24, 25, storageClassStorageBuffer, 0, 1, decorationBlock)
			a.op(opDecorate, 25, decorationNonReadable)
			a.buffer(26, 27, storageClassStorageBuffer, 0, 1, decorationBlock)
			a.op(opDecorate, 27, decorationNonReadable)
		}, []Binding{rw(0, 0), wo(0, 1)}},
		{"variables without set or binding are skipped", func(a *asm) {
			a.op(opTypeStruct, 20, tFloat).
				op(opTypePointer, 30, storageClassStorageBuffer, 20).
				op(opVariable, 30, 21, storageClassStorageBuffer).
				op(opDecorate, 21, decorationBinding, 0).
				op(opVariable, 30, 22, storageClassStorageBuffer).
				op(opDecorate, 22, decorationDescriptorSet, 0)
		}, nil},
		{"other storage classes are skipped", func(a *asm) {
			a.buffer(20, 21, 0 /* UniformConstant */, 0, 0)
			a.buffer(22, 23, 4 /* Workgroup */, 0, 1)
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := base().types()
			tt.build(a)
			m, err := Reflect(a.bytes())
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.Bindings)
		})
	}
}

func TestReflectPushConstantSize(t *testing.T) {
	// member appends a struct member declaration: type, offset and extra
	// member decorations.
	type member struct {
		typ, offset uint32
		decs        [][]uint32
	}
	block := func(a *asm, id uint32, members ...member) {
		ids := []uint32{id}
		for i, m := range members {
			ids = append(ids, m.typ)
			a.op(opMemberDecorate, id, uint32(i), decorationOffset, m.offset)
			for _, d := range m.decs {
				a.op(opMemberDecorate, append([]uint32{id, uint32(i)}, d...)...)
			}
		}
		a.op(opTypeStruct, ids...)
	}
	tests := []struct {
		name  string
		build func(a *asm)
		want  uint32
	}{
		{"none", func(*asm) {}, 0},
		{"scalars", func(a *asm) {
			block(a, 30, member{tUint, 0, nil}, member{tInt, 4, nil}, member{tFloat, 8, nil})
			a.push(30)
		}, 12},
		{"largest offset is not last", func(a *asm) {
			block(a, 30, member{tVec4, 16, nil}, member{tFloat, 0, nil})
			a.push(30)
		}, 32},
		{"bool, double, 16-bit", func(a *asm) {
			block(a, 30, member{tBool, 0, nil}, member{tShort, 4, nil}, member{tDouble, 8, nil})
			a.push(30)
		}, 16},
		{"vector", func(a *asm) {
			block(a, 30, member{tVec3, 4, nil})
			a.push(30)
		}, 16},
		{"matrix with MatrixStride", func(a *asm) {
			a.op(opTypeVector, 19, tFloat, 3).op(opTypeMatrix, 31, 19, 3) // mat3
			block(a, 30, member{31, 0, [][]uint32{{decorationMatrixStride, 16}}})
			a.push(30)
		}, 48},
		{"row-major matrix", func(a *asm) {
			a.op(opTypeVector, 19, tFloat, 3).op(opTypeMatrix, 31, 19, 2) // mat2x3
			block(a, 30, member{31, 0, [][]uint32{{decorationRowMajor}, {decorationMatrixStride, 8}}})
			a.push(30)
		}, 24},
		{"matrix without MatrixStride", func(a *asm) {
			block(a, 30, member{tMat4, 0, nil})
			a.push(30)
		}, 64},
		{"array with ArrayStride", func(a *asm) {
			a.op(opConstant, tUint, 40, 3).
				op(opTypeArray, 31, tFloat, 40).
				op(opDecorate, 31, decorationArrayStride, 16)
			block(a, 30, member{tFloat, 0, nil}, member{31, 16, nil})
			a.push(30)
		}, 64},
		{"array without ArrayStride", func(a *asm) {
			a.op(opConstant, tUint, 40, 5).op(opTypeArray, 31, tFloat, 40)
			block(a, 30, member{31, 0, nil})
			a.push(30)
		}, 20},
		{"array sized by a spec constant", func(a *asm) {
			a.op(opSpecConstant, tInt, 40, 6).
				op(opDecorate, 40, decorationSpecID, 3).
				op(opTypeArray, 31, tFloat, 40).
				op(opDecorate, 31, decorationArrayStride, 4)
			block(a, 30, member{31, 0, nil})
			a.push(30)
		}, 24},
		{"array of matrices takes the member's MatrixStride", func(a *asm) {
			a.op(opConstant, tUint, 40, 2).op(opTypeArray, 31, tMat4, 40)
			block(a, 30, member{31, 0, [][]uint32{{decorationMatrixStride, 32}}})
			a.push(30)
		}, 256},
		{"nested structs", func(a *asm) {
			block(a, 32, member{tFloat, 0, nil}, member{tVec3, 16, nil}) // 28 bytes
			a.op(opConstant, tUint, 40, 2).
				op(opTypeArray, 31, 32, 40).
				op(opDecorate, 31, decorationArrayStride, 32)
			block(a, 30, member{tUint, 0, nil}, member{32, 16, nil}, member{31, 48, nil})
			a.push(30)
		}, 112},
		{"physical storage buffer pointer", func(a *asm) {
			a.op(opTypePointer, 31, storageClassPhysicalSB, tFloat)
			block(a, 30, member{31, 0, nil}, member{tUint, 8, nil})
			a.push(30)
		}, 12},
		{"64-bit array length", func(a *asm) {
			a.op(opTypeInt, 19, 64, 0).
				op(opConstant, 19, 40, 3, 0).
				op(opTypeArray, 31, tFloat, 40)
			block(a, 30, member{31, 0, nil})
			a.push(30)
		}, 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := base().types()
			tt.build(a)
			m, err := Reflect(a.bytes())
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.PushConstantSize)
		})
	}
}

func TestReflectLocalSize(t *testing.T) {
	tests := []struct {
		name    string
		build   func() *asm
		size    [3]uint32
		specIDs [3]int32
	}{
		{"LocalSize", func() *asm {
			return newModule().entry(1, "main").op(opExecutionMode, 1, executionModeLocalSize, 16, 8, 2)
		}, [3]uint32{16, 8, 2}, [3]int32{-1, -1, -1}},
		{"LocalSizeId with constants", func() *asm {
			return newModule().entry(1, "main").types().
				op(opConstant, tUint, 40, 32).
				op(opConstant, tUint, 41, 2).
				op(opExecutionModeID, 1, executionModeLocalSizeID, 40, 41, 41)
		}, [3]uint32{32, 2, 2}, [3]int32{-1, -1, -1}},
		{"LocalSizeId with spec constants", func() *asm {
			return newModule().entry(1, "main").types().
				op(opSpecConstant, tUint, 40, 32).
				op(opDecorate, 40, decorationSpecID, 7).
				op(opSpecConstant, tUint, 41, 3). // no SpecId
				op(opConstant, tUint, 42, 1).
				op(opExecutionModeID, 1, executionModeLocalSizeID, 40, 41, 42)
		}, [3]uint32{32, 3, 1}, [3]int32{7, -1, -1}},
		{"WorkgroupSize overrides LocalSize", func() *asm {
			return base().types().
				op(opConstant, tUint, 40, 128).
				op(opConstant, tUint, 41, 1).
				op(opConstantComposite, tVec3, 42, 40, 41, 41).
				op(opDecorate, 42, decorationBuiltIn, builtInWorkgroupSize)
		}, [3]uint32{128, 1, 1}, [3]int32{-1, -1, -1}},
		{"WorkgroupSize from spec constants", func() *asm {
			return base().types().
				op(opSpecConstant, tUint, 40, 64).
				op(opDecorate, 40, decorationSpecID, 0).
				op(opSpecConstant, tUint, 41, 4).
				op(opDecorate, 41, decorationSpecID, 1).
				op(opConstant, tUint, 42, 1).
				op(opSpecConstantComposite, tVec3, 43, 40, 41, 42).
				op(opDecorate, 43, decorationBuiltIn, builtInWorkgroupSize)
		}, [3]uint32{64, 4, 1}, [3]int32{0, 1, -1}},
		{"spec constant default of zero is allowed", func() *asm {
			return newModule().entry(1, "main").types().
				op(opSpecConstant, tUint, 40, 0).
				op(opDecorate, 40, decorationSpecID, 5).
				op(opConstant, tUint, 41, 1).
				op(opExecutionModeID, 1, executionModeLocalSizeID, 40, 41, 41)
		}, [3]uint32{0, 1, 1}, [3]int32{5, -1, -1}},
		{"modes of other entry points are ignored", func() *asm {
			return newModule().
				op(opEntryPoint, append([]uint32{0 /* Vertex */, 2}, str("vs")...)...).
				entry(1, "cs").
				entry(3, "cs2").
				op(opExecutionMode, 2, executionModeLocalSize, 9, 9, 9).
				op(opExecutionMode, 3, executionModeLocalSize, 7, 7, 7).
				op(opExecutionMode, 1, executionModeLocalSize, 4, 2, 1)
		}, [3]uint32{4, 2, 1}, [3]int32{-1, -1, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Reflect(tt.build().bytes())
			require.NoError(t, err)
			assert.Equal(t, tt.size, m.LocalSize)
			assert.Equal(t, tt.specIDs, m.LocalSizeSpecIDs)
		})
	}
}

func TestReflectEntryPointName(t *testing.T) {
	tests := []struct {
		name string
		want string
	}{
		{"", ""},
		{"m", "m"},
		{"main", "main"}, // fills a word; the nul takes the next one
		{"compute_kernel_7", "compute_kernel_7"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			code := newModule().
				op(opEntryPoint, append([]uint32{0 /* Vertex */, 2}, str("other")...)...).
				entry(1, tt.name).
				op(opExecutionMode, 1, executionModeLocalSize, 1, 1, 1).bytes()
			m, err := Reflect(code)
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.EntryPoint)
		})
	}
}

func TestReflectSpecConstants(t *testing.T) {
	tests := []struct {
		name  string
		build func(a *asm)
		want  []SpecConstant
	}{
		{"none", func(*asm) {}, nil},
		{"each kind, sorted by ID", func(a *asm) {
			a.op(opSpecConstantFalse, tBool, 40).op(opDecorate, 40, decorationSpecID, 9).
				op(opSpecConstant, tDouble, 41, 0, 0x40000000).op(opDecorate, 41, decorationSpecID, 2).
				op(opSpecConstant, tShort, 42, 5).op(opDecorate, 42, decorationSpecID, 5).
				op(opSpecConstant, tUint, 43, 5).op(opDecorate, 43, decorationSpecID, 0).
				op(opSpecConstantTrue, tBool, 44).op(opDecorate, 44, decorationSpecID, 1)
		}, []SpecConstant{
			{ID: 0, Kind: Uint, Bits: 32},
			{ID: 1, Kind: Bool, Bits: 32},
			{ID: 2, Kind: Float, Bits: 64},
			{ID: 5, Kind: Int, Bits: 16},
			{ID: 9, Kind: Bool, Bits: 32},
		}},
		{"without SpecId or not specializable", func(a *asm) {
			a.op(opSpecConstant, tUint, 40, 5).
				op(opConstant, tUint, 41, 5).op(opDecorate, 41, decorationSpecID, 3).
				op(opSpecConstant, tFloat, 42, 0).op(opDecorate, 42, decorationSpecID, 4)
		}, []SpecConstant{{ID: 4, Kind: Float, Bits: 32}}},
		{"duplicate IDs appear once", func(a *asm) {
			a.op(opSpecConstant, tUint, 40, 5).op(opDecorate, 40, decorationSpecID, 3).
				op(opSpecConstant, tUint, 41, 1).op(opDecorate, 41, decorationSpecID, 3)
		}, []SpecConstant{{ID: 3, Kind: Uint, Bits: 32}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := base().types()
			tt.build(a)
			m, err := Reflect(a.bytes())
			require.NoError(t, err)
			assert.Equal(t, tt.want, m.SpecConstants)
		})
	}
}

func TestStringers(t *testing.T) {
	tests := []struct {
		v    interface{ String() string }
		want string
	}{
		{StorageBuffer, "StorageBuffer"},
		{UniformBuffer, "UniformBuffer"},
		{BindingKind(0), "BindingKind(0)"},
		{ReadOnly, "ReadOnly"},
		{WriteOnly, "WriteOnly"},
		{ReadWrite, "ReadWrite"},
		{Access(9), "Access(9)"},
		{Bool, "Bool"},
		{Int, "Int"},
		{Uint, "Uint"},
		{Float, "Float"},
		{ScalarKind(0), "ScalarKind(0)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.v.String())
		})
	}
}

func FuzzReflect(f *testing.F) {
	valid := [][]byte{
		shaders.Mul, shaders.MulVec4, shaders.Add, shaders.AddVec4, shaders.Saxpy, shaders.LogRegGrad, shaders.LogRegUpdate,
		readTestdata(f, "spec.spv"), readTestdata(f, "spec_vk13.spv"), readTestdata(f, "layout.spv"),
	}
	for _, code := range valid {
		f.Add(code)
	}
	mul := shaders.Mul
	f.Add([]byte{})
	f.Add(mul[:3])
	f.Add(mul[:16])
	f.Add(mul[:24])
	f.Add(edit(mul, func(w []uint32) []uint32 { w[0] = bits.ReverseBytes32(w[0]); return w }))
	f.Add(edit(mul, func(w []uint32) []uint32 { w[5] &= 0xffff; return w }))
	f.Add(edit(mul, func(w []uint32) []uint32 { w[len(w)-1] |= 0xffff << 16; return w }))
	f.Add(base().types().op(opTypeStruct, 30, 30).op(opMemberDecorate, 30, 0, decorationOffset, 0).push(30).bytes())

	f.Fuzz(func(t *testing.T, code []byte) {
		m, err := Reflect(code)
		if err != nil {
			if m != nil {
				t.Fatalf("Reflect returned a module with error %v", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if m == nil {
			t.Fatal("Reflect returned neither a module nor an error")
		}
		if !slices.IsSortedFunc(m.Bindings, func(a, b Binding) int {
			if a.Set != b.Set {
				return cmpUint32(a.Set, b.Set)
			}
			return cmpUint32(a.Binding, b.Binding)
		}) {
			t.Fatalf("bindings not sorted: %v", m.Bindings)
		}
		for i := 1; i < len(m.Bindings); i++ {
			if m.Bindings[i].Set == m.Bindings[i-1].Set && m.Bindings[i].Binding == m.Bindings[i-1].Binding {
				t.Fatalf("duplicate binding: %v", m.Bindings)
			}
		}
		for i := 1; i < len(m.SpecConstants); i++ {
			if m.SpecConstants[i].ID <= m.SpecConstants[i-1].ID {
				t.Fatalf("spec constants not strictly sorted: %v", m.SpecConstants)
			}
		}
	})
}
