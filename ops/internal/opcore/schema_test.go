package opcore_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/ops"
	"github.com/vkflow/vkflow/tensor"
)

// TestSchemas: every op has a schema whose attributes all have a type,
// and its JSON round-trips.
func TestSchemas(t *testing.T) {
	names := ops.Names()
	schemas := ops.Schemas()
	require.Len(t, schemas, len(names), "an op without a schema")
	for _, s := range schemas {
		for _, a := range s.Attrs {
			assert.NotEmpty(t, a.Type, "%s: attribute %q has no type", s.Name, a.Name)
		}
		var back ops.Schema
		require.NoError(t, json.Unmarshal([]byte(s.JSON()), &back))
		assert.Equal(t, s, back)
	}
	s, err := ops.SchemaOf("sum")
	require.NoError(t, err)
	assert.Equal(t, "1", s.Inputs)
	assert.Equal(t, "vjp", s.Gradient)
	assert.Equal(t, []string{"axes", "keepdims"}, []string{s.Attrs[0].Name, s.Attrs[1].Name})
	s, err = ops.SchemaOf("floor")
	require.NoError(t, err)
	assert.Equal(t, "zero", s.Gradient)
	_, err = ops.SchemaOf("nope")
	assert.ErrorIs(t, err, vkflow.ErrInvalid)
}

// TestSchemaRefusesUndeclaredAttrs: an attribute the op does not take is
// ErrInvalid naming the ones it does (it used to be ignored), from
// Prepare, a stream and the dynamic ops; declared ones pass.
func TestSchemaRefusesUndeclaredAttrs(t *testing.T) {
	m, _ := testutil.Manager(t)
	x, err := tensor.FromSlice(m, []float32{3, 1, 2, 0})
	require.NoError(t, err)
	s, err := ops.NewStream(m)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, err = ops.Prepare(m, "sum", []*tensor.Tensor{x}, nil, ops.Attrs{Perm: []int{0}})
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	assert.Contains(t, err.Error(), `attribute "perm" is not one of the op's (it takes only axes, keepdims)`)
	_, err = s.Call("add", []*tensor.Tensor{x, x}, nil, ops.Attrs{KeepDims: true})
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	assert.Contains(t, err.Error(), "takes no attributes")
	_, err = s.Call("nonzero", []*tensor.Tensor{x}, nil, ops.Attrs{Descending: true})
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	outs, err := s.Call("sort", []*tensor.Tensor{x}, nil, ops.Attrs{Descending: true, Stable: new(bool)})
	require.NoError(t, err)
	require.NoError(t, outs[0].Wait(ctxT(t)))
	v, err := outs[0].Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{3, 2, 1, 0}, v)
}

// TestRegistryDoc: docs/OPS_REGISTRY.md is what the schemas generate (go
// run ./tools/opsdoc rewrites it).
func TestRegistryDoc(t *testing.T) {
	have, err := os.ReadFile("../../../docs/OPS_REGISTRY.md")
	require.NoError(t, err)
	assert.Equal(t, ops.RegistryMarkdown(), string(have), "docs/OPS_REGISTRY.md is stale: run go run ./tools/opsdoc")
}
