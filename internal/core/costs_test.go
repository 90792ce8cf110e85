package core_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
)

// A Manager measures its device's costs once and caches them per device
// and driver in the user cache folder; the next Manager reads them back;
// a damaged cache file is measured again.
func TestCostsCached(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	m, _ := testutil.Manager(t)
	c, err := m.Runtime().Costs(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "measured", c.Source)
	assert.True(t, c.Valid(), "%+v", c)
	assert.Greater(t, c.SubmitNs, 0.0)
	if m.Runtime().PhysicalQueues() == 1 {
		assert.Zero(t, c.HandoffNs, "no second physical queue to hand off to")
	}
	require.FileExists(t, c.Path)
	assert.Equal(t, filepath.Join(os.Getenv("XDG_CACHE_HOME"), "vkflow"), filepath.Dir(c.Path))
	again, err := m.Runtime().Costs(context.Background())
	require.NoError(t, err)
	assert.Equal(t, c, again, "measured once per Manager")

	m2, _ := testutil.Manager(t)
	cached, err := m2.Runtime().Costs(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "cache", cached.Source)
	assert.Equal(t, [3]float64{c.SubmitNs, c.HandoffNs, c.ByteNs}, [3]float64{cached.SubmitNs, cached.HandoffNs, cached.ByteNs})

	require.NoError(t, os.WriteFile(c.Path, []byte(`{"submit_ns": -1, "byte_ns": 0}`), 0o644))
	m3, _ := testutil.Manager(t)
	fresh, err := m3.Runtime().Costs(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "measured", fresh.Source, "an invalid cache file is measured again")
	assert.True(t, fresh.Valid())
}

func TestManagerCostsAfterClose(t *testing.T) {
	m, _ := testutil.Manager(t)
	require.NoError(t, m.Close())
	_, err := m.Costs(context.Background())
	require.ErrorIs(t, err, vkflow.ErrClosed)
}
