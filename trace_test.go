package vkflow_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/tensor"
)

// WithTrace and VKFLOW_TRACE: the file is written at Close (a second
// Manager of the process under VKFLOW_TRACE writes NAME.2.json), and a
// file that cannot be written makes Close fail, naming the trace.
// examples/rasterblend's TestTrace checks a trace's contents.
func TestTraceFiles(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("VKFLOW_TRACE", filepath.Join(dir, "env.json"))
	for range 2 {
		m, _ := testutil.Manager(t)
		x, err := tensor.FromSlice(m, []float32{1, 2, 3})
		require.NoError(t, err)
		_, err = x.Float32s()
		require.NoError(t, err)
		require.NoError(t, m.Close())
	}
	for _, name := range []string{"env.json", "env.2.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, name)
		var tr struct {
			TraceEvents []map[string]any `json:"traceEvents"`
		}
		require.NoError(t, json.Unmarshal(data, &tr), name)
		assert.NotEmpty(t, tr.TraceEvents, name)
	}

	m, _ := testutil.Manager(t, vkflow.WithTrace(filepath.Join(dir, "no", "such", "dir", "t.json")))
	err := m.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "trace")
}
