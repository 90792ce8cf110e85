package opcore

import (
	"bytes"
	"container/list"
	encbin "encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/tensor"
)

// The prepared-op cache of a Stream. A prepared op keeps its pipelines,
// layouts, descriptor pools and scratch tensors; a call with the same key
// (op, attributes, dtypes, shapes, which tensors alias and which outputs
// are given) binds it to the call's tensors, records it and unbinds it
// again, so the cache never keeps a caller's tensor alive.

// slotKind says where a binding's tensor comes from at a call.
type slotKind uint8

const (
	fromIn  slotKind = iota // the call's input i
	fromOut                 // the call's output i
	own                     // the op's own (scratch) tensor
)

type slot struct {
	kind slotKind
	i    int
	t    *tensor.Tensor // for own
}

// outSpec is an output's dtype and shape, to allocate it at a call.
type outSpec struct {
	dt    tensor.Dtype
	shape []int
}

// prepared is a cached Op and how to bind it to a call's tensors.
type prepared struct {
	key   string
	op    *Op
	binds [][]slot  // per step, per binding
	outs  []outSpec // per output of the op
	elem  *list.Element
	recs  []*recording // stream_rec.go
}

// newPrepared describes op, just built over in (and out, given) for key.
// It reports false when the op cannot be reused: an output it returned is
// one of the inputs although the caller gave none.
func newPrepared(key string, op *Op, in, out []*tensor.Tensor) (*prepared, bool) {
	p := &prepared{key: key, op: op}
	for j, o := range op.outs {
		if OutAt(out, j) == nil && indexOf(in, o) >= 0 {
			return nil, false
		}
		p.outs = append(p.outs, outSpec{o.Dtype(), o.Shape()})
	}
	for _, st := range op.steps {
		ts := st.alg.Tensors()
		row := make([]slot, len(ts))
		for k, t := range ts {
			switch i, j := indexOf(in, t), indexOf(op.outs, t); {
			case i >= 0:
				row[k] = slot{kind: fromIn, i: i}
			case j >= 0:
				row[k] = slot{kind: fromOut, i: j}
			default:
				row[k] = slot{kind: own, t: t}
			}
		}
		p.binds = append(p.binds, row)
	}
	return p, true
}

func indexOf(ts []*tensor.Tensor, t *tensor.Tensor) int {
	for i, x := range ts {
		if x == t {
			return i
		}
	}
	return -1
}

// outputs returns the call's outputs: those given, and new tensors for the
// nil ones, which it also returns as made (the caller closes them on
// failure).
func (p *prepared) outputs(o Owner, out []*tensor.Tensor) (outs, made []*tensor.Tensor, err error) {
	outs = make([]*tensor.Tensor, len(p.outs))
	for j, spec := range p.outs {
		if t := OutAt(out, j); t != nil {
			outs[j] = t
			continue
		}
		t, err := tensor.New(o, spec.dt, spec.shape)
		if err != nil {
			for _, m := range made {
				_ = m.Close()
			}
			return nil, nil, err
		}
		outs[j], made = t, append(made, t)
	}
	return outs, made, nil
}

// bind binds every dispatch of the op to the call's tensors; on failure
// nothing stays bound.
func (p *prepared) bind(in, outs []*tensor.Tensor) error {
	for s, st := range p.op.steps {
		row := p.binds[s]
		ts := make([]*tensor.Tensor, len(row))
		for k, sl := range row {
			switch sl.kind {
			case fromIn:
				ts[k] = in[sl.i]
			case fromOut:
				ts[k] = outs[sl.i]
			default:
				ts[k] = sl.t
			}
		}
		if err := st.alg.Bind(ts...); err != nil {
			p.unbind()
			return err
		}
	}
	return nil
}

// unbind drops the bindings (recorded dispatches hold their own).
func (p *prepared) unbind() {
	for _, st := range p.op.steps {
		st.alg.Unbind()
	}
}

// forget drops the op's pointers to the tensors of the call it was built
// for: the cache must not keep them reachable.
func (p *prepared) forget() {
	p.op.ins, p.op.outs, p.op.made = nil, nil, nil
}

// appendKey appends the cache key of a call to b: the op, the registry's
// generation, the attributes and, per tensor, its dtype, shape and which
// earlier tensor of the call shares its buffer. The caller holds references
// on every tensor (their allocations are read). It allocates nothing when
// b has room: the cache looks the key up as bytes.
func appendKey(b []byte, name string, gen uint64, in, out []*tensor.Tensor, at *Attrs) ([]byte, error) {
	b = append(b, name...)
	b = append(b, '#')
	b = strconv.AppendUint(b, gen, 10)
	if !at.zero() {
		var err error
		if b, err = appendAttrs(b, at); err != nil {
			return nil, core.Invalid("ops.%s: attributes: %v", name, err)
		}
	}
	// Tensors by position: dtype, shape, and the first earlier tensor of
	// the call with the same buffer (ops choose kernels by aliasing).
	at0 := func(i int) *tensor.Tensor {
		if i < len(in) {
			return in[i]
		}
		return out[i-len(in)]
	}
	for i := 0; i < len(in)+len(out); i++ {
		if i == len(in) {
			b = append(b, "->"...)
		}
		b = append(b, '|')
		t := at0(i)
		if t == nil {
			b = append(b, '-')
			continue
		}
		b = append(b, t.Dtype().String()...)
		for _, n := range t.Shape() {
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(n), 10)
		}
		buf := t.Allocation().Buffer
		for j := 0; j < i; j++ {
			if u := at0(j); u != nil && u.Allocation().Buffer == buf {
				b = append(b, '=')
				b = strconv.AppendInt(b, int64(j), 10)
				break
			}
		}
	}
	if len(out) == 0 {
		b = append(b, "->"...)
	}
	return b, nil
}

// appendAttrs appends the fields of at that are not zero, each as its
// index and its value, without encoding/json (which cost eager calls with
// attributes a few microseconds and allocations): numbers and bools as
// varints, slices with their length (an empty slice is not a nil one),
// pointers as a presence byte and the value. A field of another kind is an
// error, which TestAttrsKey catches when a field is added.
func appendAttrs(b []byte, at *Attrs) ([]byte, error) {
	v := reflect.ValueOf(at).Elem()
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.IsZero() {
			continue
		}
		b = append(b, '{')
		b = encbin.AppendUvarint(b, uint64(i))
		var err error
		if b, err = appendValue(b, f); err != nil {
			return nil, fmt.Errorf("field %s: %w", v.Type().Field(i).Name, err)
		}
	}
	return b, nil
}

func appendValue(b []byte, f reflect.Value) ([]byte, error) {
	switch f.Kind() {
	case reflect.Bool:
		if f.Bool() {
			return append(b, 1), nil
		}
		return append(b, 0), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encbin.AppendVarint(b, f.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return encbin.AppendUvarint(b, f.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return encbin.AppendUvarint(b, math.Float64bits(f.Float())), nil
	case reflect.String:
		b = encbin.AppendUvarint(b, uint64(f.Len()))
		return append(b, f.String()...), nil
	case reflect.Pointer:
		if f.IsNil() {
			return append(b, 0), nil
		}
		return appendValue(append(b, 1), f.Elem())
	case reflect.Slice, reflect.Array:
		if f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Uint8 {
			b = encbin.AppendUvarint(b, uint64(f.Len()))
			return append(b, f.Bytes()...), nil
		}
		b = encbin.AppendUvarint(b, uint64(f.Len()))
		for k := 0; k < f.Len(); k++ {
			var err error
			if b, err = appendValue(b, f.Index(k)); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("kind %v has no key encoding", f.Kind())
}

// zero reports whether at's memory is all zero bytes, as the zero Attrs of
// most eager calls is: the key then needs no attribute encoding. It covers
// every field, one added later too, without reflection (reflect's IsZero
// of the struct cost a sync eager call about half a microsecond). Zero
// bytes imply zero fields; the converse may fail (padding, an empty string
// over a non-nil pointer), and then appendAttrs, which skips zero fields,
// appends nothing, so the key is the same either way.
func (at *Attrs) zero() bool {
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(at)), unsafe.Sizeof(*at)), zeroAttrs[:])
}

// zeroAttrs is the bytes of the zero Attrs.
var zeroAttrs [unsafe.Sizeof(Attrs{})]byte

// opCache is a bounded LRU of prepared ops. Its Stream's lock guards it.
type opCache struct {
	dev *core.Device
	max int
	lru list.List // of *prepared, most recently used first
	m   map[string]*prepared
}

// get returns the prepared op for key and marks it used, or nil.
func (c *opCache) get(key []byte) *prepared {
	p := c.m[string(key)] // no allocation: the compiler looks the bytes up
	if p != nil {
		c.lru.MoveToFront(p.elem)
	}
	return p
}

// put adds p and drops the least recently used ops past the bound.
// Closing a dropped op is safe while work recorded from it is in flight:
// its pipelines and tensors live until that work completes.
func (c *opCache) put(p *prepared) {
	if c.m == nil {
		c.m = map[string]*prepared{}
	}
	p.elem = c.lru.PushFront(p)
	c.m[p.key] = p
	var evicted uint64
	for c.lru.Len() > c.max {
		old := c.lru.Remove(c.lru.Back()).(*prepared)
		delete(c.m, old.key)
		old.close()
		evicted++
	}
	c.dev.CountOpCacheChange(1-int64(evicted), evicted)
}

// clear closes every prepared op.
func (c *opCache) clear() {
	n := int64(c.lru.Len())
	for e := c.lru.Front(); e != nil; e = e.Next() {
		e.Value.(*prepared).close()
	}
	c.lru.Init()
	clear(c.m)
	c.dev.CountOpCacheChange(-n, 0)
}
