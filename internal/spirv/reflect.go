package spirv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrInvalid is wrapped by every error Reflect returns: the input is not a
// SPIR-V compute module that Reflect can read.
var ErrInvalid = errors.New("spirv: invalid module")

// BindingKind says what kind of descriptor a binding needs.
type BindingKind uint8

// Binding kinds. The zero value is not a valid kind.
const (
	// StorageBuffer is a storage buffer (VK_DESCRIPTOR_TYPE_STORAGE_BUFFER).
	StorageBuffer BindingKind = iota + 1
	// UniformBuffer is a uniform buffer (VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER).
	UniformBuffer
)

// String returns the kind's name.
func (k BindingKind) String() string {
	switch k {
	case StorageBuffer:
		return "StorageBuffer"
	case UniformBuffer:
		return "UniformBuffer"
	}
	return fmt.Sprintf("BindingKind(%d)", uint8(k))
}

// Access says how a shader may access a bound buffer.
type Access uint8

// Access modes. The zero value is not a valid mode.
const (
	// ReadOnly buffers are never written by the shader.
	ReadOnly Access = iota + 1
	// WriteOnly buffers are never read by the shader.
	WriteOnly
	// ReadWrite buffers may be both read and written.
	ReadWrite
)

// String returns the access mode's name.
func (a Access) String() string {
	switch a {
	case ReadOnly:
		return "ReadOnly"
	case WriteOnly:
		return "WriteOnly"
	case ReadWrite:
		return "ReadWrite"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// ScalarKind is the type of a specialization constant.
type ScalarKind uint8

// Scalar kinds. The zero value is not a valid kind.
const (
	Bool ScalarKind = iota + 1
	Int
	Uint
	Float
)

// String returns the kind's name.
func (k ScalarKind) String() string {
	switch k {
	case Bool:
		return "Bool"
	case Int:
		return "Int"
	case Uint:
		return "Uint"
	case Float:
		return "Float"
	}
	return fmt.Sprintf("ScalarKind(%d)", uint8(k))
}

// Binding is one descriptor-bound buffer of a module.
type Binding struct {
	Set     uint32 // DescriptorSet decoration
	Binding uint32 // Binding decoration
	Kind    BindingKind
	// Access is ReadOnly when the variable, or every member of its block,
	// is decorated NonWritable, and WriteOnly when the same holds for
	// NonReadable; otherwise ReadWrite. A buffer that is both NonWritable
	// and NonReadable is reported as ReadOnly, and uniform buffers are
	// always ReadOnly.
	Access Access
}

// SpecConstant is a scalar specialization constant.
type SpecConstant struct {
	ID   uint32 // SpecId decoration (VkSpecializationMapEntry.constantID)
	Kind ScalarKind
	// Bits is the scalar's width in bits; 32 for Bool, whose
	// specialization data is a VkBool32.
	Bits uint32
}

// Module is what Reflect learns about a compute module.
type Module struct {
	// EntryPoint is the name of the first GLCompute entry point.
	EntryPoint string
	// LocalSize is the workgroup size. Components set by specialization
	// constants hold the constants' default values.
	LocalSize [3]uint32
	// LocalSizeSpecIDs holds, for each component of LocalSize, the SpecId
	// of the specialization constant that sets it, or -1 when the
	// component is not specializable.
	LocalSizeSpecIDs [3]int32
	// Bindings lists the module's buffer bindings sorted by (Set, Binding),
	// one entry per pair.
	Bindings []Binding
	// PushConstantSize is the byte size of the push constant block: the
	// largest member Offset plus that member's size. It is 0 when the
	// module has no push constants.
	PushConstantSize uint32
	// SpecConstants lists the scalar specialization constants sorted by
	// ID, one entry per ID.
	SpecConstants []SpecConstant
}

const (
	opFunction    = 54
	opFunctionEnd = 56
	magic         = 0x07230203
	magicSwapped  = 0x03022307
	headerWords   = 5
)

// SPIR-V enumerants Reflect uses: opcodes, decorations, built-ins,
// execution modes and models, and storage classes (SPIR-V specification,
// section 3).
const (
	opEntryPoint              = 15
	opExecutionMode           = 16
	opTypeBool                = 20
	opTypeInt                 = 21
	opTypeFloat               = 22
	opTypeVector              = 23
	opTypeMatrix              = 24
	opTypeArray               = 28
	opTypeRuntimeArray        = 29
	opTypeStruct              = 30
	opTypePointer             = 32
	opConstantTrue            = 41
	opConstantFalse           = 42
	opConstant                = 43
	opConstantComposite       = 44
	opSpecConstantTrue        = 48
	opSpecConstantFalse       = 49
	opSpecConstant            = 50
	opSpecConstantComposite   = 51
	opVariable                = 59
	opDecorate                = 71
	opMemberDecorate          = 72
	opExecutionModeID         = 331
	decorationSpecID          = 1
	decorationBlock           = 2
	decorationBufferBlock     = 3
	decorationRowMajor        = 4
	decorationArrayStride     = 6
	decorationMatrixStride    = 7
	decorationBuiltIn         = 11
	decorationNonWritable     = 24
	decorationNonReadable     = 25
	decorationBinding         = 33
	decorationDescriptorSet   = 34
	decorationOffset          = 35
	builtInWorkgroupSize      = 25
	executionModeLocalSize    = 17
	executionModeLocalSizeID  = 38
	executionModelGLCompute   = 5
	storageClassUniform       = 2
	storageClassPushConstant  = 9
	storageClassStorageBuffer = 12
	storageClassPhysicalSB    = 5349 // PhysicalStorageBuffer
)

// maxTypeDepth bounds how deeply types may nest when computing sizes, and how
// many array levels are unwrapped around a buffer block.
const maxTypeDepth = 64

var opNames = map[uint16]string{
	opEntryPoint:            "OpEntryPoint",
	opExecutionMode:         "OpExecutionMode",
	opTypeBool:              "OpTypeBool",
	opTypeInt:               "OpTypeInt",
	opTypeFloat:             "OpTypeFloat",
	opTypeVector:            "OpTypeVector",
	opTypeMatrix:            "OpTypeMatrix",
	opTypeArray:             "OpTypeArray",
	opTypeRuntimeArray:      "OpTypeRuntimeArray",
	opTypeStruct:            "OpTypeStruct",
	opTypePointer:           "OpTypePointer",
	opConstantTrue:          "OpConstantTrue",
	opConstantFalse:         "OpConstantFalse",
	opConstant:              "OpConstant",
	opConstantComposite:     "OpConstantComposite",
	opSpecConstantTrue:      "OpSpecConstantTrue",
	opSpecConstantFalse:     "OpSpecConstantFalse",
	opSpecConstant:          "OpSpecConstant",
	opSpecConstantComposite: "OpSpecConstantComposite",
	opVariable:              "OpVariable",
	opDecorate:              "OpDecorate",
	opMemberDecorate:        "OpMemberDecorate",
	opExecutionModeID:       "OpExecutionModeId",
}

func opName(op uint16) string {
	if name, ok := opNames[op]; ok {
		return name
	}
	return fmt.Sprintf("opcode %d", op)
}

// minOperands is the smallest operand count (words after the first) that
// Reflect needs for each instruction it reads.
var minOperands = map[uint16]int{
	opEntryPoint:            3, // model, function, name
	opExecutionMode:         2, // function, mode
	opExecutionModeID:       2,
	opTypeBool:              1, // result
	opTypeInt:               3, // result, width, signedness
	opTypeFloat:             2, // result, width
	opTypeVector:            3, // result, component type, count
	opTypeMatrix:            3, // result, column type, count
	opTypeArray:             3, // result, element type, length
	opTypeRuntimeArray:      2, // result, element type
	opTypeStruct:            1, // result, members...
	opTypePointer:           3, // result, storage class, type
	opConstantTrue:          2, // type, result
	opConstantFalse:         2,
	opConstant:              3, // type, result, value...
	opConstantComposite:     2, // type, result, constituents...
	opSpecConstantTrue:      2,
	opSpecConstantFalse:     2,
	opSpecConstant:          3,
	opSpecConstantComposite: 2,
	opVariable:              3, // type, result, storage class
	opDecorate:              2, // target, decoration
	opMemberDecorate:        3, // struct, member, decoration
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// decoration flags.
const (
	decBlock uint32 = 1 << iota
	decBufferBlock
	decRowMajor
	decNonWritable
	decNonReadable
	decHasSpecID
	decHasBinding
	decHasSet
	decHasArrayStride
	decHasMatrixStride
	decHasOffset
)

// decorations collects the decorations Reflect cares about on one id or
// one struct member.
type decorations struct {
	flags        uint32
	specID       uint32
	binding      uint32
	set          uint32
	arrayStride  uint32
	matrixStride uint32
	offset       uint32
}

func (d *decorations) has(flag uint32) bool { return d != nil && d.flags&flag != 0 }

type memberKey struct {
	id     uint32
	member uint32
}

// inst is an instruction's opcode and operands (the words after the first).
type inst struct {
	op   uint16
	args []uint32
}

type variable struct {
	typ, id, storage uint32
}

type parser struct {
	types      map[uint32]inst // by result id; args[0] is the result id
	consts     map[uint32]inst // by result id; args[0] is the type, args[1] the result id
	constOrder []uint32
	decs       map[uint32]*decorations
	members    map[memberKey]*decorations
	vars       []variable
	wgSizeIDs  []uint32 // ids decorated BuiltIn WorkgroupSize, in order

	haveEntry bool
	entryFunc uint32
	entryName string
	modes     []inst // OpExecutionMode and OpExecutionModeId, in order

	structSizes map[uint32]uint64
	inProgress  map[uint32]bool

	// function structure, checked because drivers may crash on modules
	// truncated at an instruction boundary
	funcs     map[uint32]bool // OpFunction result ids
	inFunc    bool
	lastOp    uint16
	funcCount int
}

// Reflect reads a SPIR-V module in its binary form (little-endian words) and
// describes its first GLCompute entry point and its resources. Every error
// wraps ErrInvalid.
func Reflect(code []byte) (*Module, error) {
	words, err := decodeWords(code)
	if err != nil {
		return nil, err
	}
	p := &parser{
		types:       make(map[uint32]inst),
		consts:      make(map[uint32]inst),
		decs:        make(map[uint32]*decorations),
		members:     make(map[memberKey]*decorations),
		structSizes: make(map[uint32]uint64),
		inProgress:  make(map[uint32]bool),
		funcs:       make(map[uint32]bool),
	}
	if err := p.parse(words); err != nil {
		return nil, err
	}
	if !p.haveEntry {
		return nil, invalidf("module has no GLCompute entry point")
	}
	m := &Module{EntryPoint: p.entryName}
	if m.LocalSize, m.LocalSizeSpecIDs, err = p.localSize(); err != nil {
		return nil, err
	}
	if m.Bindings, err = p.bindings(); err != nil {
		return nil, err
	}
	if m.PushConstantSize, err = p.pushConstantSize(); err != nil {
		return nil, err
	}
	if m.SpecConstants, err = p.specConstants(); err != nil {
		return nil, err
	}
	if p.inFunc || p.funcCount == 0 || p.lastOp != opFunctionEnd {
		return nil, invalidf("truncated module: it does not end with a complete function")
	}
	if !p.funcs[p.entryFunc] {
		return nil, invalidf("entry point %q names function %%%d, which the module does not define", p.entryName, p.entryFunc)
	}
	return m, nil
}

func decodeWords(code []byte) ([]uint32, error) {
	switch {
	case len(code) == 0:
		return nil, invalidf("empty SPIR-V")
	case len(code)%4 != 0:
		return nil, invalidf("SPIR-V length %d is not a multiple of 4", len(code))
	case len(code) < headerWords*4:
		return nil, invalidf("SPIR-V has %d words, fewer than the %d-word header", len(code)/4, headerWords)
	}
	switch first := binary.LittleEndian.Uint32(code); first {
	case magic:
	case magicSwapped:
		return nil, invalidf("big-endian SPIR-V is not supported")
	default:
		return nil, invalidf("bad magic number 0x%08x, want 0x%08x", first, uint32(magic))
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}
	return words, nil
}

func (p *parser) parse(words []uint32) error {
	for at := headerWords; at < len(words); {
		count := int(words[at] >> 16)
		op := uint16(words[at])
		if count == 0 {
			return invalidf("truncated instruction at word %d: word count is 0", at)
		}
		if count > len(words)-at {
			return invalidf("truncated instruction at word %d: %s needs %d words, %d remain",
				at, opName(op), count, len(words)-at)
		}
		args := words[at+1 : at+count]
		if need, ok := minOperands[op]; ok && len(args) < need {
			return invalidf("%s at word %d has %d operands, want at least %d", opName(op), at, len(args), need)
		}
		if err := p.instruction(op, args, at); err != nil {
			return err
		}
		switch op {
		case opFunction:
			if p.inFunc {
				return invalidf("OpFunction at word %d inside another function", at)
			}
			if len(args) < 2 {
				return invalidf("OpFunction at word %d has %d operands", at, len(args))
			}
			p.inFunc = true
			p.funcs[args[1]] = true
			p.funcCount++
		case opFunctionEnd:
			if !p.inFunc {
				return invalidf("OpFunctionEnd at word %d outside a function", at)
			}
			p.inFunc = false
		}
		p.lastOp = op
		at += count
	}
	return nil
}

func (p *parser) instruction(op uint16, args []uint32, at int) error {
	switch op {
	case opEntryPoint:
		if args[0] != executionModelGLCompute || p.haveEntry {
			return nil
		}
		name, ok := literalString(args[2:])
		if !ok {
			return invalidf("OpEntryPoint at word %d: name is not terminated", at)
		}
		p.haveEntry, p.entryFunc, p.entryName = true, args[1], name

	case opExecutionMode, opExecutionModeID:
		p.modes = append(p.modes, inst{op, args})

	case opTypeBool, opTypeInt, opTypeFloat, opTypeVector, opTypeMatrix,
		opTypeArray, opTypeRuntimeArray, opTypeStruct, opTypePointer:
		p.types[args[0]] = inst{op, args}

	case opConstantTrue, opConstantFalse, opConstant, opConstantComposite,
		opSpecConstantTrue, opSpecConstantFalse, opSpecConstant, opSpecConstantComposite:
		if _, dup := p.consts[args[1]]; !dup {
			p.constOrder = append(p.constOrder, args[1])
		}
		p.consts[args[1]] = inst{op, args}

	case opVariable:
		p.vars = append(p.vars, variable{typ: args[0], id: args[1], storage: args[2]})

	case opDecorate:
		d := p.decs[args[0]]
		if d == nil {
			d = &decorations{}
			p.decs[args[0]] = d
		}
		if err := d.add(args[1], args[2:], at); err != nil {
			return err
		}
		if args[1] == decorationBuiltIn && len(args) > 2 && args[2] == builtInWorkgroupSize {
			p.wgSizeIDs = append(p.wgSizeIDs, args[0])
		}

	case opMemberDecorate:
		key := memberKey{args[0], args[1]}
		d := p.members[key]
		if d == nil {
			d = &decorations{}
			p.members[key] = d
		}
		return d.add(args[2], args[3:], at)
	}
	return nil
}

// add records one decoration with its literal operands.
func (d *decorations) add(dec uint32, lits []uint32, at int) error {
	needLiteral := func() (uint32, error) {
		if len(lits) == 0 {
			return 0, invalidf("decoration %d at word %d has no operand", dec, at)
		}
		return lits[0], nil
	}
	var err error
	switch dec {
	case decorationBlock:
		d.flags |= decBlock
	case decorationBufferBlock:
		d.flags |= decBufferBlock
	case decorationRowMajor:
		d.flags |= decRowMajor
	case decorationNonWritable:
		d.flags |= decNonWritable
	case decorationNonReadable:
		d.flags |= decNonReadable
	case decorationSpecID:
		d.specID, err = needLiteral()
		d.flags |= decHasSpecID
	case decorationBinding:
		d.binding, err = needLiteral()
		d.flags |= decHasBinding
	case decorationDescriptorSet:
		d.set, err = needLiteral()
		d.flags |= decHasSet
	case decorationArrayStride:
		d.arrayStride, err = needLiteral()
		d.flags |= decHasArrayStride
	case decorationMatrixStride:
		d.matrixStride, err = needLiteral()
		d.flags |= decHasMatrixStride
	case decorationOffset:
		d.offset, err = needLiteral()
		d.flags |= decHasOffset
	case decorationBuiltIn:
		_, err = needLiteral()
	}
	return err
}

// literalString decodes a nul-terminated UTF-8 string packed into words.
func literalString(words []uint32) (string, bool) {
	buf := make([]byte, 0, 4*len(words))
	for _, w := range words {
		for shift := 0; shift < 32; shift += 8 {
			c := byte(w >> shift)
			if c == 0 {
				return string(buf), true
			}
			buf = append(buf, c)
		}
	}
	return "", false
}

// localSize finds the entry point's workgroup size. A constant decorated
// BuiltIn WorkgroupSize takes precedence over the execution modes.
func (p *parser) localSize() ([3]uint32, [3]int32, error) {
	size := [3]uint32{}
	ids := [3]int32{-1, -1, -1}
	found := false
	for _, mode := range p.modes {
		if mode.args[0] != p.entryFunc {
			continue
		}
		switch {
		case mode.op == opExecutionMode && mode.args[1] == executionModeLocalSize:
			if len(mode.args) < 5 {
				return size, ids, invalidf("LocalSize execution mode has %d operands, want 3", len(mode.args)-2)
			}
			copy(size[:], mode.args[2:5])
			ids = [3]int32{-1, -1, -1}
			found = true
		case mode.op == opExecutionModeID && mode.args[1] == executionModeLocalSizeID:
			if len(mode.args) < 5 {
				return size, ids, invalidf("LocalSizeId execution mode has %d operands, want 3", len(mode.args)-2)
			}
			for i, id := range mode.args[2:5] {
				v, spec, err := p.scalarConstant(id, "LocalSizeId")
				if err != nil {
					return size, ids, err
				}
				size[i], ids[i] = v, spec
			}
			found = true
		}
	}
	for _, id := range p.wgSizeIDs {
		c, ok := p.consts[id]
		if !ok {
			continue // e.g. a variable; only a constant defines the size
		}
		if (c.op != opConstantComposite && c.op != opSpecConstantComposite) || len(c.args) != 5 {
			return size, ids, invalidf("WorkgroupSize constant %%%d is not a 3-component composite", id)
		}
		for i, cid := range c.args[2:5] {
			v, spec, err := p.scalarConstant(cid, "WorkgroupSize")
			if err != nil {
				return size, ids, err
			}
			size[i], ids[i] = v, spec
		}
		found = true
		break
	}
	if !found {
		return size, ids, invalidf("entry point %q declares no workgroup size", p.entryName)
	}
	for i := range size {
		if size[i] == 0 && ids[i] < 0 {
			return size, ids, invalidf("workgroup size %v has a zero component", size)
		}
	}
	return size, ids, nil
}

// scalarConstant resolves an integer constant or specialization constant to
// its (default) value, with the SpecId that can change it or -1.
func (p *parser) scalarConstant(id uint32, what string) (uint32, int32, error) {
	c, ok := p.consts[id]
	if !ok || (c.op != opConstant && c.op != opSpecConstant) {
		return 0, -1, invalidf("%s operand %%%d is not a scalar constant", what, id)
	}
	t, ok := p.types[c.args[0]]
	if !ok || t.op != opTypeInt {
		return 0, -1, invalidf("%s operand %%%d is not an integer constant", what, id)
	}
	v, ok := constantValue(c.args[2:], t.args[1], t.args[2] != 0)
	if !ok || v > math.MaxUint32 {
		return 0, -1, invalidf("%s operand %%%d does not fit in 32 unsigned bits", what, id)
	}
	spec := int32(-1)
	if c.op == opSpecConstant {
		if d := p.decs[id]; d.has(decHasSpecID) {
			if d.specID > math.MaxInt32 {
				return 0, -1, invalidf("SpecId %d of %%%d is out of range", d.specID, id)
			}
			spec = int32(d.specID)
		}
	}
	return uint32(v), spec, nil
}

// constantValue reads an integer constant's value words as a non-negative
// number. It reports false for negative values and malformed words.
func constantValue(words []uint32, width uint32, signed bool) (uint64, bool) {
	switch {
	case width <= 32 && len(words) >= 1:
		v := words[0]
		if width < 32 {
			v &= 1<<width - 1
		}
		if signed && width > 0 && v>>(width-1)&1 != 0 {
			return 0, false
		}
		return uint64(v), true
	case width == 64 && len(words) >= 2:
		v := uint64(words[1])<<32 | uint64(words[0])
		if signed && v>>63 != 0 {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

func (p *parser) bindings() ([]Binding, error) {
	var out []Binding
	for _, v := range p.vars {
		if v.storage != storageClassStorageBuffer && v.storage != storageClassUniform {
			continue
		}
		d := p.decs[v.id]
		if !d.has(decHasSet) || !d.has(decHasBinding) {
			continue
		}
		block, err := p.blockOf(v)
		if err != nil {
			return nil, err
		}
		b := Binding{Set: d.set, Binding: d.binding, Kind: StorageBuffer}
		if v.storage == storageClassUniform && !p.decs[block].has(decBufferBlock) {
			b.Kind = UniformBuffer
		}
		nonWritable := d.has(decNonWritable) || p.allMembers(block, decNonWritable)
		nonReadable := d.has(decNonReadable) || p.allMembers(block, decNonReadable)
		switch {
		case b.Kind == UniformBuffer || nonWritable:
			b.Access = ReadOnly
		case nonReadable:
			b.Access = WriteOnly
		default:
			b.Access = ReadWrite
		}
		out = append(out, b)
	}
	slices.SortStableFunc(out, func(a, b Binding) int {
		if a.Set != b.Set {
			return cmpUint32(a.Set, b.Set)
		}
		return cmpUint32(a.Binding, b.Binding)
	})
	// Variables that alias one binding become one entry whose access
	// covers them all.
	merged := out[:0]
	for _, b := range out {
		if n := len(merged); n > 0 && merged[n-1].Set == b.Set && merged[n-1].Binding == b.Binding {
			last := &merged[n-1]
			if last.Kind != b.Kind {
				return nil, invalidf("set %d binding %d is declared as both %v and %v",
					b.Set, b.Binding, last.Kind, b.Kind)
			}
			if last.Access != b.Access {
				last.Access = ReadWrite
			}
			continue
		}
		merged = append(merged, b)
	}
	return merged, nil
}

func cmpUint32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// blockOf returns the type a buffer variable points to, with any arrays of
// descriptors around it unwrapped.
func (p *parser) blockOf(v variable) (uint32, error) {
	ptr, ok := p.types[v.typ]
	if !ok || ptr.op != opTypePointer {
		return 0, invalidf("type of variable %%%d is not a pointer", v.id)
	}
	id := ptr.args[2]
	for range maxTypeDepth {
		t, ok := p.types[id]
		if !ok || (t.op != opTypeArray && t.op != opTypeRuntimeArray) {
			return id, nil
		}
		id = t.args[1]
	}
	return 0, invalidf("type of variable %%%d nests arrays too deeply", v.id)
}

// allMembers reports whether id is a struct with at least one member and
// every member carries the decoration flag.
func (p *parser) allMembers(id, flag uint32) bool {
	t, ok := p.types[id]
	if !ok || t.op != opTypeStruct || len(t.args) < 2 {
		return false
	}
	for i := range len(t.args) - 1 {
		if !p.members[memberKey{id, uint32(i)}].has(flag) {
			return false
		}
	}
	return true
}

func (p *parser) pushConstantSize() (uint32, error) {
	var size uint64
	for _, v := range p.vars {
		if v.storage != storageClassPushConstant {
			continue
		}
		ptr, ok := p.types[v.typ]
		if !ok || ptr.op != opTypePointer {
			return 0, invalidf("type of push constant variable %%%d is not a pointer", v.id)
		}
		s, err := p.sizeOf(ptr.args[2], nil, 0)
		if err != nil {
			return 0, err
		}
		size = max(size, s)
	}
	return uint32(size), nil
}

// sizeOf returns the byte size of a type. member holds the decorations of
// the struct member the type belongs to, for MatrixStride and RowMajor.
// Every result fits in 32 bits.
func (p *parser) sizeOf(id uint32, member *decorations, depth int) (uint64, error) {
	if depth > maxTypeDepth {
		return 0, invalidf("type %%%d nests too deeply", id)
	}
	t, ok := p.types[id]
	if !ok {
		return 0, invalidf("type %%%d is not defined or has no size", id)
	}
	var size uint64
	switch t.op {
	case opTypeBool:
		size = 4
	case opTypeInt, opTypeFloat:
		width := t.args[1]
		if width == 0 || width%8 != 0 || width > 64 {
			return 0, invalidf("type %%%d has width %d", id, width)
		}
		size = uint64(width / 8)
	case opTypeVector:
		comp, err := p.sizeOf(t.args[1], nil, depth+1)
		if err != nil {
			return 0, err
		}
		size = uint64(t.args[2]) * comp
	case opTypeMatrix:
		cols := uint64(t.args[2])
		if member.has(decHasMatrixStride) {
			n := cols
			if member.has(decRowMajor) {
				col, ok := p.types[t.args[1]]
				if !ok || col.op != opTypeVector {
					return 0, invalidf("column type of matrix %%%d is not a vector", id)
				}
				n = uint64(col.args[2])
			}
			size = n * uint64(member.matrixStride)
		} else {
			col, err := p.sizeOf(t.args[1], nil, depth+1)
			if err != nil {
				return 0, err
			}
			size = cols * col
		}
	case opTypeArray:
		c, ok := p.consts[t.args[2]]
		if !ok || (c.op != opConstant && c.op != opSpecConstant) {
			return 0, invalidf("length of array %%%d is not a constant", id)
		}
		lt, ok := p.types[c.args[0]]
		if !ok || lt.op != opTypeInt {
			return 0, invalidf("length of array %%%d is not an integer", id)
		}
		n, ok := constantValue(c.args[2:], lt.args[1], lt.args[2] != 0)
		if !ok || n > math.MaxUint32 {
			return 0, invalidf("length of array %%%d is out of range", id)
		}
		var stride uint64
		if d := p.decs[id]; d.has(decHasArrayStride) {
			stride = uint64(d.arrayStride)
		} else {
			s, err := p.sizeOf(t.args[1], member, depth+1)
			if err != nil {
				return 0, err
			}
			stride = s
		}
		size = n * stride
	case opTypeRuntimeArray:
		return 0, invalidf("runtime array %%%d has no fixed size", id)
	case opTypeStruct:
		s, err := p.structSize(id, t, depth)
		if err != nil {
			return 0, err
		}
		size = s
	case opTypePointer:
		if t.args[1] != storageClassPhysicalSB {
			return 0, invalidf("pointer type %%%d has no size", id)
		}
		size = 8
	default:
		return 0, invalidf("type %%%d (%s) has no size", id, opName(t.op))
	}
	if size > math.MaxUint32 {
		return 0, invalidf("type %%%d is larger than 4 GiB", id)
	}
	return size, nil
}

// structSize is the largest member Offset plus that member's size. Sizes
// are memoized, so that wide structs of structs cost linear time, and a
// struct that contains itself is an error.
func (p *parser) structSize(id uint32, t inst, depth int) (uint64, error) {
	if s, ok := p.structSizes[id]; ok {
		return s, nil
	}
	if p.inProgress[id] {
		return 0, invalidf("struct %%%d contains itself", id)
	}
	p.inProgress[id] = true
	defer delete(p.inProgress, id)
	var size uint64
	for i, mt := range t.args[1:] {
		md := p.members[memberKey{id, uint32(i)}]
		if !md.has(decHasOffset) {
			return 0, invalidf("member %d of struct %%%d has no Offset", i, id)
		}
		s, err := p.sizeOf(mt, md, depth+1)
		if err != nil {
			return 0, err
		}
		size = max(size, uint64(md.offset)+s)
	}
	if size > math.MaxUint32 {
		return 0, invalidf("struct %%%d is larger than 4 GiB", id)
	}
	p.structSizes[id] = size
	return size, nil
}

func (p *parser) specConstants() ([]SpecConstant, error) {
	var out []SpecConstant
	for _, id := range p.constOrder {
		c := p.consts[id]
		if c.op != opSpecConstant && c.op != opSpecConstantTrue && c.op != opSpecConstantFalse {
			continue
		}
		d := p.decs[id]
		if !d.has(decHasSpecID) {
			continue
		}
		sc := SpecConstant{ID: d.specID}
		t, ok := p.types[c.args[0]]
		switch {
		case !ok:
			return nil, invalidf("type of specialization constant %%%d is not defined", id)
		case t.op == opTypeBool:
			sc.Kind, sc.Bits = Bool, 32
		case t.op == opTypeInt && t.args[2] != 0:
			sc.Kind, sc.Bits = Int, t.args[1]
		case t.op == opTypeInt:
			sc.Kind, sc.Bits = Uint, t.args[1]
		case t.op == opTypeFloat:
			sc.Kind, sc.Bits = Float, t.args[1]
		default:
			return nil, invalidf("specialization constant %%%d has non-scalar type %s", id, opName(t.op))
		}
		if (c.op == opSpecConstantTrue || c.op == opSpecConstantFalse) != (sc.Kind == Bool) {
			return nil, invalidf("specialization constant %%%d: %s with a %v type", id, opName(c.op), sc.Kind)
		}
		out = append(out, sc)
	}
	slices.SortStableFunc(out, func(a, b SpecConstant) int { return cmpUint32(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b SpecConstant) bool { return a.ID == b.ID }), nil
}
