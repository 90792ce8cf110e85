package opcore

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
)

// Op schemas, as NNVM's and ONNX's: each op declares the attributes it
// takes (name, type, default, meaning), its inputs and outputs, and its
// gradient entry. Prepare (and so every call from Go, C and Python)
// refuses an attribute the op does not declare, naming the ones it does,
// instead of ignoring it; SchemaOf and Schemas describe the registry, and
// docs/OPS_REGISTRY.md is generated from them (tools/opsdoc).

// AttrSpec describes one attribute of an op.
type AttrSpec struct {
	Name    string `json:"name"` // as in JSON and Python keywords
	Type    string `json:"type"`
	Default string `json:"default"`
	Doc     string `json:"doc"`
}

// Schema describes an op.
type Schema struct {
	Name string `json:"name"`
	// Inputs is the number of inputs: "1", "2", "1 or 2", "at least 1", ...
	Inputs  string     `json:"inputs"`
	Outputs int        `json:"outputs"`
	Attrs   []AttrSpec `json:"attrs"`
	// Gradient is the op's gradient entry (GradientOf).
	Gradient string `json:"gradient"`
	Reason   string `json:"reason,omitempty"`
	// Kernel: a registered kernel (else a built-in op).
	Kernel bool `json:"kernel,omitempty"`
}

// attrTypes gives each attribute's type and meaning, whatever op takes it.
var attrTypes = map[string]AttrSpec{
	"axes":            {Type: "int[]", Default: "all", Doc: "axes (negative from the end)"},
	"keepdims":        {Type: "bool", Default: "false", Doc: "keep reduced axes as size 1"},
	"perm":            {Type: "int[]", Default: "reversed", Doc: "the order of the input's axes"},
	"shift":           {Type: "int[]", Doc: "shift per axis (one: all)"},
	"reps":            {Type: "int[]", Doc: "repetitions per axis"},
	"repeats":         {Type: "int", Doc: "repetitions of each element"},
	"dtype":           {Type: "dtype", Doc: "the result's dtype"},
	"min":             {Type: "float?", Default: "unbounded", Doc: "lower bound"},
	"max":             {Type: "float?", Default: "unbounded", Doc: "upper bound"},
	"push":            {Type: "bytes", Doc: "the kernel's push constants"},
	"groups":          {Type: "uint[3]", Default: "one invocation per element of the first output", Doc: "workgroups"},
	"shape":           {Type: "int[]", Doc: "the shape"},
	"src_offset":      {Type: "int", Default: "0", Doc: "the source view's first element"},
	"src_strides":     {Type: "int[]", Default: "row-major", Doc: "the source view's strides, in elements"},
	"dst_offset":      {Type: "int", Default: "0", Doc: "the destination view's first element"},
	"dst_strides":     {Type: "int[]", Default: "row-major", Doc: "the destination view's strides, in elements"},
	"descending":      {Type: "bool", Default: "false", Doc: "largest first"},
	"stable":          {Type: "bool?", Default: "true", Doc: "accepted; the sort is always stable"},
	"side":            {Type: "string", Default: "left", Doc: "left or right"},
	"upper":           {Type: "bool", Default: "false", Doc: "the upper factor"},
	"mode":            {Type: "string", Default: "reduced", Doc: "reduced or complete"},
	"n":               {Type: "int", Doc: "the length, or the power"},
	"offset":          {Type: "int", Default: "0", Doc: "the diagonal (> 0 above, < 0 below)"},
	"axes2":           {Type: "int[]", Doc: "the contracted axes of the second input"},
	"include_initial": {Type: "bool", Default: "false", Doc: "start with the identity"},
	"k":               {Type: "int", Default: "0", Doc: "the diagonal (> 0 above, < 0 below)"},
	"full_matrices":   {Type: "bool?", Default: "true", Doc: "full U and Vh"},
	"rtol":            {Type: "float?", Default: "max(M, N)·eps", Doc: "relative cutoff of singular values"},
	"ord":             {Type: "string", Doc: "the norm's order"},
	"s":               {Type: "int[]", Default: "the input's lengths", Doc: "lengths along the axes"},
	"norm":            {Type: "string", Default: "backward", Doc: "backward, ortho or forward"},
	"sigma":           {Type: "float?", Default: "1", Doc: "the soft edge's width, in pixels (> 0)"},
	"start":           {Type: "int", Default: "0", Doc: "the first triangle"},
	"count":           {Type: "int", Default: "to the last", Doc: "the number of triangles"},
}

// opSchema is a built-in op's declaration: its inputs and outputs, and
// its attributes with per-op defaults (name or name=default).
type opSchema struct {
	inputs  string
	outputs int
	attrs   []string
}

var opSchemas = map[string]opSchema{}

// DefSchema declares the schema of the built-in ops names: their inputs,
// their outputs and their attributes (name, or name=default; the type and
// meaning come from attrTypes).
func DefSchema(inputs string, outputs int, attrs []string, names ...string) {
	for _, n := range names {
		opSchemas[n] = opSchema{inputs, outputs, attrs}
	}
}

func init() {
	def := DefSchema
	var unary, binary []string
	for n, d := range ewDefs {
		if d.arity == 1 {
			unary = append(unary, n)
		} else {
			binary = append(binary, n)
		}
	}
	def("1", 1, nil, unary...)
	def("2", 1, nil, binary...)
	def("3", 1, nil, "where")
	def("1", 1, []string{"min", "max"}, "clip")
	def("1", 1, []string{"dtype"}, "cast")
	red := []string{"axes", "keepdims"}
	def("1", 1, red, "sum", "mean", "max", "min", "prod", "all", "any")
	def("1", 1, []string{"axes=none (flattened)", "keepdims"}, "argmax")
	def("1", 1, []string{"axes=-1"}, "softmax")
	def("1", 1, []string{"axes=0", "include_initial", "dtype=the standard's"}, "cumulative_sum", "cumulative_prod")
	def("2", 1, nil, "matmul")
	def("1", 1, []string{"perm"}, "transpose")
	def("1", 1, []string{"axes"}, "flip")
	def("1", 1, []string{"shift", "axes=none (flattened)"}, "roll")
	def("1", 1, []string{"reps"}, "tile")
	def("1", 1, []string{"repeats", "axes=none (flattened)"}, "repeat")
	def("1", 1, []string{"shape"}, "broadcast_to")
	def("at least 1", 1, []string{"axes=0"}, "concat", "stack")
	def("1", 1, []string{"shape", "src_offset", "src_strides", "dst_offset", "dst_strides"}, "strided_copy")
	def("2", 1, []string{"axes=none (a 1-d input)"}, "take")
	def("at least 2", 1, []string{"axes=0"}, "gather", "scatter")
	def("1", 1, []string{"axes=-1", "descending", "stable"}, "sort", "argsort")
	def("2 or 3 (x1, x2, sorter)", 1, []string{"side"}, "searchsorted")
	def("1", 1, nil, "nonzero", "unique_values")
	def("1", 2, nil, "unique_counts", "unique_inverse")
	def("1", 4, nil, "unique_all")
	def("1", 1, []string{"k"}, "tril", "triu")
}

// kernelAttrs are a registered kernel's attributes.
var kernelAttrs = []string{"push", "groups"}

// attrName splits "name=default".
func attrName(a string) (string, string) {
	n, d, _ := strings.Cut(a, "=")
	return n, d
}

// SchemaOf returns the op's schema.
func SchemaOf(name string) (Schema, error) {
	registry.RLock()
	e, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		return Schema{}, core.Invalid("ops: no op named %q (ops.Names lists them)", name)
	}
	s := Schema{Name: name}
	var attrs []string
	if e.kernel != nil {
		s.Kernel = true
		s.Inputs = fmt.Sprint(e.kernel.inputs)
		s.Outputs = len(e.kernel.mod.Bindings) - e.kernel.inputs
		attrs = kernelAttrs
	} else {
		os, ok := opSchemas[name]
		if !ok {
			return Schema{}, core.Invalid("ops: built-in op %q has no schema", name)
		}
		s.Inputs, s.Outputs, attrs = os.inputs, os.outputs, os.attrs
	}
	for _, a := range attrs {
		n, d := attrName(a)
		spec := attrTypes[n]
		spec.Name = n
		if d != "" {
			spec.Default = d
		}
		s.Attrs = append(s.Attrs, spec)
	}
	g, err := GradientOf(name)
	if err != nil {
		return Schema{}, err
	}
	s.Gradient, s.Reason = g.Kind.String(), g.Reason
	if g.Zero {
		s.Gradient = "zero"
	}
	return s, nil
}

// Schemas returns every op's schema, by name.
func Schemas() []Schema {
	var out []Schema
	for _, n := range Names() {
		if s, err := SchemaOf(n); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// JSON returns the schema as JSON (what C's vkflow_op_schema and Python's
// vkflow.ops.schema return).
func (s Schema) JSON() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// attrFields maps Attrs' fields to attribute names (their JSON names;
// "dtype" for Dtype).
var attrFields = func() []string {
	t := reflect.TypeOf(Attrs{})
	names := make([]string, t.NumField())
	for i := range names {
		f := t.Field(i)
		n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if n == "-" || n == "" {
			n = strings.ToLower(f.Name)
		}
		names[i] = n
	}
	return names
}()

// checkAttrs refuses an attribute the op name does not declare.
func checkAttrs(name string, e entry, at Attrs) error {
	if reflect.ValueOf(at).IsZero() {
		return nil
	}
	var allowed []string
	if e.kernel != nil {
		allowed = kernelAttrs
	} else if os, ok := opSchemas[name]; ok {
		for _, a := range os.attrs {
			n, _ := attrName(a)
			allowed = append(allowed, n)
		}
	} else {
		return nil
	}
	v := reflect.ValueOf(at)
	for i, n := range attrFields {
		if v.Field(i).IsZero() {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == n
		}
		if !ok {
			sort.Strings(allowed)
			takes := "no attributes"
			if len(allowed) > 0 {
				takes = "only " + strings.Join(allowed, ", ")
			}
			return core.Invalid("ops.%s: attribute %q is not one of the op's (it takes %s)", name, n, takes)
		}
	}
	return nil
}

// RegistryMarkdown describes every built-in op of the registry, from the
// schemas: docs/OPS_REGISTRY.md (tools/opsdoc writes it; a test keeps it
// current).
func RegistryMarkdown() string {
	var b strings.Builder
	b.WriteString("# The op registry\n\n")
	b.WriteString("Generated from the op schemas (`ops.SchemaOf`) by `go run ./tools/opsdoc`; do not edit. ")
	b.WriteString("Every op takes exactly the attributes listed: another one is `ErrInvalid` naming the op's. ")
	b.WriteString("Gradient: `vjp` (a VJP), `zero` (a VJP of zeros almost everywhere), `none` (no derivative), ")
	b.WriteString("`pending` (no VJP yet); see GRADIENTS.md.\n\n")
	b.WriteString("| op | inputs | outputs | attributes | gradient |\n|---|---|---|---|---|\n")
	for _, s := range Schemas() {
		if s.Kernel {
			continue
		}
		var as []string
		for _, a := range s.Attrs {
			d := ""
			if a.Default != "" {
				d = " = " + a.Default
			}
			as = append(as, fmt.Sprintf("`%s` %s%s", a.Name, a.Type, d))
		}
		attrs := strings.Join(as, "; ")
		if attrs == "" {
			attrs = "none"
		}
		g := s.Gradient
		if s.Reason != "" {
			g += ": " + s.Reason
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %s | %s |\n", s.Name, s.Inputs, s.Outputs, attrs, g)
	}
	b.WriteString("\nAttributes:\n\n")
	names := make([]string, 0, len(attrTypes))
	for n := range attrTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		a := attrTypes[n]
		fmt.Fprintf(&b, "- `%s` (%s): %s\n", n, a.Type, a.Doc)
	}
	return b.String()
}
