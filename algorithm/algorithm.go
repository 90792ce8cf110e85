package algorithm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"sync"
	"unsafe"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/spirv"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/vk"
)

// Owner is what New takes: a *vkflow.Manager.
type Owner = core.Owner

// Access says how a shader uses a bound buffer.
type Access = spirv.Access

// Access modes.
const (
	ReadOnly  = spirv.ReadOnly
	WriteOnly = spirv.WriteOnly
	ReadWrite = spirv.ReadWrite
)

// Option configures New.
type Option func(*options) error

type options struct {
	groups [3]uint32
	items  uint32
	spec   []specValue
}

type specValue struct {
	id   uint32
	kind spirv.ScalarKind
	bits uint32
	data []byte
	name string // Go type, for messages
}

// Workgroups sets the dispatch size explicitly.
func Workgroups(x, y, z uint32) Option {
	return func(o *options) error {
		if x == 0 || y == 0 || z == 0 {
			return core.Invalid("Workgroups(%d, %d, %d): every count must be at least 1", x, y, z)
		}
		o.groups = [3]uint32{x, y, z}
		return nil
	}
}

// ItemsPerInvocation says how many elements of the first tensor each
// invocation handles (4 for vec4 kernels), for the derived workgroup count.
func ItemsPerInvocation(n uint32) Option {
	return func(o *options) error {
		if n == 0 {
			return core.Invalid("ItemsPerInvocation(0)")
		}
		o.items = n
		return nil
	}
}

// Spec sets specialization constant id to v, which must be a bool, int32,
// uint32, float32, int64, uint64 or float64 matching the constant's type in
// the shader.
func Spec(id uint32, v any) Option {
	return func(o *options) error {
		s := specValue{id: id, name: fmt.Sprintf("%T", v)}
		var b [8]byte
		le := binary.LittleEndian
		switch x := v.(type) {
		case bool:
			if x {
				le.PutUint32(b[:], 1)
			}
			s.kind, s.bits, s.data = spirv.Bool, 32, b[:4]
		case int32:
			le.PutUint32(b[:], uint32(x))
			s.kind, s.bits, s.data = spirv.Int, 32, b[:4]
		case uint32:
			le.PutUint32(b[:], x)
			s.kind, s.bits, s.data = spirv.Uint, 32, b[:4]
		case float32:
			le.PutUint32(b[:], math.Float32bits(x))
			s.kind, s.bits, s.data = spirv.Float, 32, b[:4]
		case int64:
			le.PutUint64(b[:], uint64(x))
			s.kind, s.bits, s.data = spirv.Int, 64, b[:8]
		case uint64:
			le.PutUint64(b[:], x)
			s.kind, s.bits, s.data = spirv.Uint, 64, b[:8]
		case float64:
			le.PutUint64(b[:], math.Float64bits(x))
			s.kind, s.bits, s.data = spirv.Float, 64, b[:8]
		default:
			return core.Invalid("Spec(%d): unsupported type %T (use bool, int32, uint32, float32, int64, uint64 or float64)", id, v)
		}
		s.data = append([]byte(nil), s.data...)
		o.spec = append(o.spec, s)
		return nil
	}
}

// Push encodes push constant values in order, little-endian and packed, as
// encoding/binary does: numbers, fixed-size arrays and structs of them.
func Push(values ...any) ([]byte, error) {
	var buf bytes.Buffer
	for i, v := range values {
		if v == nil || reflect.TypeOf(v).Kind() == reflect.Slice || binary.Size(v) < 0 {
			return nil, core.Invalid("push constant %d: %T has no fixed size (use numbers, arrays or structs)", i, v)
		}
		if err := binary.Write(&buf, binary.LittleEndian, v); err != nil {
			return nil, core.Invalid("push constant %d: %v", i, err)
		}
	}
	return buf.Bytes(), nil
}

// Algorithm is a compute pipeline and its current tensor bindings. Its
// methods are safe for concurrent use.
type Algorithm struct {
	obj    core.Object
	dev    *core.Device
	mod    *spirv.Module
	module vk.ShaderModule
	setLay vk.DescriptorSetLayout
	layout vk.PipelineLayout
	pipe   vk.Pipeline
	local  [3]uint32
	groups [3]uint32 // explicit, or zero
	items  uint32

	mu      sync.Mutex
	tensors []*tensor.Tensor
	pools   []vk.DescriptorPool
	freeSet []vk.DescriptorSet
	inPool  int // sets allocated from the newest pool
}

const setsPerPool = 64

// New builds an algorithm from SPIR-V bytes, bound to tensors at set 0,
// bindings 0..len(tensors)-1.
func New(o Owner, code []byte, tensors []*tensor.Tensor, opts ...Option) (*Algorithm, error) {
	d, err := core.Enter(o)
	if err != nil {
		return nil, err
	}
	defer d.Exit()
	mod, err := spirv.Reflect(code)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", core.ErrInvalid, err)
	}
	op := options{items: 1}
	for _, f := range opts {
		if f == nil {
			continue
		}
		if err := f(&op); err != nil {
			return nil, err
		}
	}
	for i, b := range mod.Bindings {
		if b.Set != 0 || b.Binding != uint32(i) || b.Kind != spirv.StorageBuffer {
			return nil, core.Invalid("shader binding (set %d, binding %d, %v) is not supported: vkflow binds storage buffers at set 0, bindings 0..n-1", b.Set, b.Binding, b.Kind)
		}
	}
	if len(tensors) != len(mod.Bindings) {
		return nil, core.Invalid("binding count mismatch: the shader has %d bindings, got %d tensors", len(mod.Bindings), len(tensors))
	}
	if err := checkTensors(d, tensors); err != nil {
		return nil, err
	}
	if lim := d.Info.Limits.MaxPushConstantsSize; mod.PushConstantSize > lim {
		return nil, core.Unsupported("push constants of %d bytes exceed maxPushConstantsSize %d", mod.PushConstantSize, lim)
	}
	specEntries, specData, local, err := resolveSpec(mod, op.spec)
	if err != nil {
		return nil, err
	}
	lim := d.Info.Limits
	if local[0]*local[1]*local[2] > lim.MaxComputeWorkGroupInvocations || local[0] > lim.MaxComputeWorkGroupSize[0] ||
		local[1] > lim.MaxComputeWorkGroupSize[1] || local[2] > lim.MaxComputeWorkGroupSize[2] {
		return nil, core.Unsupported("local size %v exceeds the device's compute workgroup limits", local)
	}

	a := &Algorithm{dev: d, mod: mod, local: local, groups: op.groups, items: op.items}
	if err := a.build(code, specEntries, specData); err != nil {
		a.destroy()
		return nil, d.Check(err)
	}
	if err := a.obj.Init(d, core.KindAlgorithm, a.destroy, func() { _ = a.bind(nil) }); err != nil {
		a.destroy()
		return nil, err
	}
	// A Manager.Close that closed a meanwhile also frees it.
	if err := a.bind(tensors); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Algorithm) build(code []byte, spec []vk.SpecEntry, specData []byte) error {
	d := a.dev.VK
	words := make([]uint32, len(code)/4)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(code)), code)
	var err error
	if a.module, err = d.CreateShaderModule(words); err != nil {
		return err
	}
	bindings := make([]vk.LayoutBinding, len(a.mod.Bindings))
	for i := range bindings {
		bindings[i] = vk.LayoutBinding{Binding: uint32(i), Type: vk.DescriptorStorageBuffer, Count: 1}
	}
	if a.setLay, err = d.CreateDescriptorSetLayout(bindings); err != nil {
		return err
	}
	if a.layout, err = d.CreatePipelineLayout([]vk.DescriptorSetLayout{a.setLay}, a.mod.PushConstantSize); err != nil {
		return err
	}
	a.pipe, err = d.CreateComputePipeline(a.dev.Cache, a.layout, a.module, a.mod.EntryPoint, spec, specData)
	return err
}

func checkTensors(d *core.Device, ts []*tensor.Tensor) error {
	for i, t := range ts {
		if t == nil {
			return core.Invalid("tensor %d is nil", i)
		}
		if t.Closed() {
			return core.Closed(fmt.Sprintf("tensor %d", i))
		}
		if t.Object().Device() != d {
			return core.Invalid("tensor %d belongs to another Manager", i)
		}
	}
	return nil
}

func resolveSpec(mod *spirv.Module, vals []specValue) ([]vk.SpecEntry, []byte, [3]uint32, error) {
	local := mod.LocalSize
	var entries []vk.SpecEntry
	var data []byte
	seen := map[uint32]bool{}
	for _, v := range vals {
		if seen[v.id] {
			return nil, nil, local, core.Invalid("Spec(%d) given twice", v.id)
		}
		seen[v.id] = true
		var want *spirv.SpecConstant
		for i := range mod.SpecConstants {
			if mod.SpecConstants[i].ID == v.id {
				want = &mod.SpecConstants[i]
			}
		}
		if want == nil {
			return nil, nil, local, core.Invalid("Spec(%d): the shader has no specialization constant with that ID", v.id)
		}
		if want.Kind != v.kind || want.Bits != v.bits {
			return nil, nil, local, core.Invalid("Spec(%d): the shader's constant is %v%d, got %s", v.id, want.Kind, want.Bits, v.name)
		}
		entries = append(entries, vk.SpecEntry{ID: v.id, Offset: uint32(len(data)), Size: uint32(len(v.data))})
		data = append(data, v.data...)
		for k, id := range mod.LocalSizeSpecIDs {
			if id >= 0 && uint32(id) == v.id && v.bits == 32 && (v.kind == spirv.Uint || v.kind == spirv.Int) {
				local[k] = binary.LittleEndian.Uint32(v.data)
			}
		}
	}
	for k := range local {
		if local[k] == 0 {
			return nil, nil, local, core.Invalid("local size %v has a zero component", local)
		}
	}
	return entries, data, local, nil
}

// bind replaces the current tensors, holding a reference on each.
//
// Binding tensors (ts not nil) fails with ErrClosed once the algorithm is
// closed: checked under mu, which Close's bind(nil) also takes, so a Bind
// racing Close either lands before Close releases the bindings or not at
// all, and never leaves references behind on a closed algorithm.
func (a *Algorithm) bind(ts []*tensor.Tensor) error {
	for _, t := range ts {
		t.Object().Acquire()
	}
	a.mu.Lock()
	if ts != nil && a.obj.Closed() {
		a.mu.Unlock()
		for _, t := range ts {
			t.Object().Release()
		}
		return core.Closed("algorithm")
	}
	old := a.tensors
	a.tensors = append([]*tensor.Tensor(nil), ts...)
	a.mu.Unlock()
	for _, t := range old {
		t.Object().Release()
	}
	return nil
}

// Bind re-binds the algorithm to new tensors without rebuilding the
// pipeline. Dispatches recorded afterwards use them; dispatches recorded
// before keep theirs until their sequence is re-recorded (Rerecord).
func (a *Algorithm) Bind(ts ...*tensor.Tensor) error {
	if err := a.usable(); err != nil {
		return err
	}
	if len(ts) != len(a.mod.Bindings) {
		return core.Invalid("binding count mismatch: the shader has %d bindings, got %d tensors", len(a.mod.Bindings), len(ts))
	}
	if err := checkTensors(a.dev, ts); err != nil {
		return err
	}
	if err := a.dev.Enter(); err != nil {
		return err
	}
	defer a.dev.Exit()
	return a.bind(ts)
}

// Unbind drops the bound tensors and the references the algorithm holds on
// them, so that an algorithm kept for later reuse (package ops' cache of
// prepared ops) does not keep their memory alive. Dispatches recorded
// before keep their own references. Bind again before recording a
// dispatch: recording an unbound algorithm fails.
func (a *Algorithm) Unbind() {
	if a == nil {
		return
	}
	a.mu.Lock()
	old := a.tensors
	a.tensors = nil
	a.mu.Unlock()
	for _, t := range old {
		t.Object().Release()
	}
}

func (a *Algorithm) usable() error {
	if a == nil {
		return core.Invalid("nil algorithm")
	}
	if a.obj.Closed() {
		return core.Closed("algorithm")
	}
	return nil
}

// Tensors returns the bound tensors.
func (a *Algorithm) Tensors() []*tensor.Tensor {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*tensor.Tensor(nil), a.tensors...)
}

// PushSize returns the shader's push constant block size in bytes.
func (a *Algorithm) PushSize() int { return int(a.mod.PushConstantSize) }

// LocalSize returns the workgroup size after specialization.
func (a *Algorithm) LocalSize() [3]uint32 { return a.local }

// Access returns how the shader uses binding i.
func (a *Algorithm) Access(i int) Access { return a.mod.Bindings[i].Access }

// Workgroups returns the dispatch size: the explicit one, or
// ceil(len(first tensor) / (local size x * items per invocation)).
func (a *Algorithm) Workgroups() [3]uint32 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.workgroupsLocked()
}

func (a *Algorithm) workgroupsLocked() [3]uint32 {
	if a.groups != ([3]uint32{}) {
		return a.groups
	}
	if len(a.tensors) == 0 {
		return [3]uint32{1, 1, 1}
	}
	per := uint64(a.local[0]) * uint64(a.items)
	n := (uint64(a.tensors[0].Len()) + per - 1) / per
	return [3]uint32{uint32(min(n, math.MaxUint32)), 1, 1}
}

// Snapshot returns the current bindings and workgroup count for a
// dispatch being recorded, with a reference taken on each tensor under the
// algorithm's lock; the caller releases them.
func (a *Algorithm) Snapshot() ([]*tensor.Tensor, [3]uint32, error) {
	if err := a.usable(); err != nil {
		return nil, [3]uint32{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, t := range a.tensors {
		if t.Closed() {
			return nil, [3]uint32{}, core.Closed(fmt.Sprintf("algorithm binding %d: tensor", i))
		}
	}
	for _, t := range a.tensors {
		t.Object().Acquire()
	}
	return append([]*tensor.Tensor(nil), a.tensors...), a.workgroupsLocked(), nil
}

// TakeBinding writes a snapshot's tensors into a descriptor set of its own.
// The caller owns the set until ReturnBinding, and holds references on the
// tensors meanwhile.
func (a *Algorithm) TakeBinding(ts []*tensor.Tensor) (vk.DescriptorSet, error) {
	if err := a.usable(); err != nil {
		return 0, err
	}
	if len(ts) != len(a.mod.Bindings) {
		return 0, core.Invalid("binding count mismatch: the shader has %d bindings, got %d tensors", len(a.mod.Bindings), len(ts))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	set, err := a.allocSet()
	if err != nil {
		return 0, err
	}
	writes := make([]vk.BufferWrite, len(ts))
	for i, t := range ts {
		writes[i] = vk.BufferWrite{Binding: uint32(i), Type: vk.DescriptorStorageBuffer, Buffer: t.Allocation().Buffer, Range: bindRange(t)}
	}
	a.dev.VK.WriteDescriptorBuffers(set, writes)
	return set, nil
}

// ReturnBinding gives a descriptor set back for reuse. The caller
// guarantees no pending GPU work uses it, and drops its references on the
// set's tensors only after ReturnBinding: the set is first pointed at the
// device's placeholder buffer, so that no pooled set names a buffer that
// another thread may destroy (see core.PlaceholderBuffer).
func (a *Algorithm) ReturnBinding(set vk.DescriptorSet) {
	if buf, size, err := a.dev.PlaceholderBuffer(); err == nil && len(a.mod.Bindings) > 0 {
		writes := make([]vk.BufferWrite, len(a.mod.Bindings))
		for i := range writes {
			writes[i] = vk.BufferWrite{Binding: uint32(i), Type: vk.DescriptorStorageBuffer, Buffer: buf, Range: size}
		}
		a.dev.VK.WriteDescriptorBuffers(set, writes)
	}
	a.mu.Lock()
	a.freeSet = append(a.freeSet, set)
	a.mu.Unlock()
}

func (a *Algorithm) allocSet() (vk.DescriptorSet, error) {
	if n := len(a.freeSet); n > 0 {
		s := a.freeSet[n-1]
		a.freeSet = a.freeSet[:n-1]
		return s, nil
	}
	if len(a.pools) == 0 || a.inPool == setsPerPool {
		n := uint32(max(len(a.mod.Bindings), 1))
		p, err := a.dev.VK.CreateDescriptorPool(setsPerPool, []vk.PoolSize{{Type: vk.DescriptorStorageBuffer, Count: n * setsPerPool}}, false)
		if err != nil {
			return 0, err
		}
		a.pools = append(a.pools, p)
		a.inPool = 0
	}
	s, err := a.dev.VK.AllocateDescriptorSet(a.pools[len(a.pools)-1], a.setLay)
	if err != nil {
		return 0, err
	}
	a.inPool++
	return s, nil
}

// Pipeline returns the pipeline and its layout, for vkflow's own packages.
func (a *Algorithm) Pipeline() (vk.Pipeline, vk.PipelineLayout) { return a.pipe, a.layout }

// Object returns the lifetime object, for vkflow's own packages.
func (a *Algorithm) Object() *core.Object { return &a.obj }

// Close releases the algorithm and its tensor references. The pipeline is
// destroyed once no sequence holds it and the GPU is done. Idempotent.
func (a *Algorithm) Close() error {
	if a == nil {
		return nil
	}
	a.obj.Close() // releases the tensors (onClose)
	return nil
}

func (a *Algorithm) destroy() {
	d := a.dev.VK
	for _, p := range a.pools {
		d.DestroyDescriptorPool(p)
	}
	a.pools, a.freeSet = nil, nil
	if a.pipe != 0 {
		d.DestroyPipeline(a.pipe)
	}
	if a.layout != 0 {
		d.DestroyPipelineLayout(a.layout)
	}
	if a.setLay != 0 {
		d.DestroyDescriptorSetLayout(a.setLay)
	}
	if a.module != 0 {
		d.DestroyShaderModule(a.module)
	}
}

// bindRange is the descriptor range of t: its bytes, or for an empty
// tensor the 4 bytes of padding its buffer has (a range cannot be 0).
func bindRange(t *tensor.Tensor) uint64 {
	if b := t.Bytes(); b > 0 {
		return b
	}
	return 4
}
