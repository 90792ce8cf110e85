package tensor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/tensor"
)

// TestDtypeByName: every dtype, complex ones included, is found by its
// name, and nothing else is.
func TestDtypeByName(t *testing.T) {
	all := append(tensor.Dtypes(), tensor.ComplexDtypes()...)
	require.Equal(t, []tensor.Dtype{tensor.Complex64, tensor.Complex128}, tensor.ComplexDtypes())
	for _, d := range all {
		got, ok := tensor.DtypeByName(d.String())
		require.True(t, ok, d.String())
		require.Equal(t, d, got)
	}
	for _, name := range []string{"", "complex32", "float128", "Dtype(0)"} {
		_, ok := tensor.DtypeByName(name)
		require.False(t, ok, name)
	}
}
