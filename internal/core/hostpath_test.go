package core_test

import (
	"context"
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// pathReport is what one Manager's host reads and writes did: whether a
// Device tensor's accessors alias its memory, and the bytes each write and
// read moved through the staging ring and through imports of the host's
// data.
type pathReport struct {
	mapped                 bool
	ringUp, ringDown       uint64
	importUp, importDown   uint64
	small, large, computed bool // the data read back was right
}

// hostPaths writes a small (1 KiB) and a large (3 MiB: over importMin)
// Device tensor, reads both back through the accessors and ReadBytes, and
// reads a tensor the GPU wrote (a sequence copy of the large one), on a
// Manager opened with opts; uncached makes every memory type uncached, as
// a discrete GPU's BAR is.
func hostPaths(t *testing.T, uncached bool, opts ...vkflow.Option) pathReport {
	t.Helper()
	m, _ := testutil.Manager(t, opts...)
	if uncached {
		core.ForgetHostCached(m.Runtime())
	}
	d := m.Runtime()
	var r pathReport
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%1000) + 0.5
		}
		return v
	}
	small, large := fill(256), fill(3<<18)
	xs, err := tensor.FromSlice(m, small)
	require.NoError(t, err)
	xl, err := tensor.FromSlice(m, large)
	require.NoError(t, err)
	y, err := tensor.New(m, tensor.Float32, []int{len(large)})
	require.NoError(t, err)
	r.mapped = xl.Mapped()
	assert.Equal(t, r.mapped, xs.Mapped(), "both tensors take the same path")
	r.ringUp, _ = d.StagingBytes()
	r.importUp, _ = d.ImportedBytes()

	gotS, err := xs.Float32s()
	require.NoError(t, err)
	r.small = assert.Equal(t, small, gotS)
	raw := make([]byte, xl.Bytes())
	require.NoError(t, xl.ReadBytes(raw))
	r.large = assert.Equal(t, large, unsafe.Slice((*float32)(unsafe.Pointer(&raw[0])), len(large)))

	seq, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer seq.Close()
	require.NoError(t, seq.Copy(xl, y).SyncLocal(y).Eval(context.Background()))
	gotY, err := y.Float32s()
	require.NoError(t, err)
	r.computed = assert.Equal(t, large, gotY)
	_, r.ringDown = d.StagingBytes()
	_, r.importDown = d.ImportedBytes()
	return r
}

func TestHostPaths(t *testing.T) {
	const small, large = 1 << 10, 3 << 20
	for _, tc := range []struct {
		name     string
		uncached bool
		opts     []vkflow.Option
		mapped   bool
		// bytes expected through the ring and through imports
		ringUp, ringDown, importUp, importDown uint64
	}{
		{name: "auto, cached memory (lavapipe): mapped both ways", mapped: true},
		{name: "auto, uncached memory (a BAR): reads copied, writes mapped", uncached: true,
			ringDown: small, importDown: 2 * large},
		{name: "mapped, uncached memory", uncached: true, opts: []vkflow.Option{vkflow.WithHostReads(vkflow.HostMapped)}, mapped: true},
		{name: "staged both ways", opts: []vkflow.Option{vkflow.WithHostReads(vkflow.HostStaged), vkflow.WithHostWrites(vkflow.HostStaged)},
			ringUp: small, ringDown: small, importUp: large, importDown: 2 * large},
		{name: "ring both ways", opts: []vkflow.Option{vkflow.WithHostReads(vkflow.HostRing), vkflow.WithHostWrites(vkflow.HostRing)},
			ringUp: small + large, ringDown: small + 2*large},
		{name: "unmapped memory: staged whatever the path", opts: []vkflow.Option{vkflow.WithStagedDeviceMemory(), vkflow.WithHostReads(vkflow.HostMapped)},
			ringUp: small, ringDown: small, importUp: large, importDown: 2 * large},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := hostPaths(t, tc.uncached, tc.opts...)
			assert.True(t, r.small && r.large && r.computed, "every read returned the data")
			assert.Equal(t, tc.mapped, r.mapped, "Mapped()")
			assert.Equal(t, [4]uint64{tc.ringUp, tc.ringDown, tc.importUp, tc.importDown},
				[4]uint64{r.ringUp, r.ringDown, r.importUp, r.importDown}, "bytes: ring up, ring down, imported up, imported down")
		})
	}
}

// The check above can fail: with reads forced through the mapping, the
// uncached case reports mapped reads and no copies, which is what a
// runtime that mapped a BAR for reading would do.
func TestHostPathsMutation(t *testing.T) {
	r := hostPaths(t, true, vkflow.WithHostReads(vkflow.HostMapped))
	assert.True(t, r.mapped)
	assert.Zero(t, r.ringDown+r.importDown, "a mapped read copies nothing")
}

// Transfers larger than the ring go through its two halves in chunks,
// the GPU filling one while the host drains the other; every byte lands
// where it belongs whatever the offset and the size's remainder.
func TestStagingChunks(t *testing.T) {
	defer core.SetStagingMax(1 << 20)()
	m, _ := testutil.Manager(t, vkflow.WithHostReads(vkflow.HostRing), vkflow.WithHostWrites(vkflow.HostRing))
	d := m.Runtime()
	const n = 7<<18 + 12 // 3.5 MiB and 48 bytes of float32: 8 chunks of 512 KiB
	x, err := tensor.New(m, tensor.Float32, []int{n})
	require.NoError(t, err)
	for _, off := range []uint64{0, 4, 1 << 19} {
		t.Run(fmt.Sprint("offset ", off), func(t *testing.T) {
			size := int(x.Bytes() - off)
			in := make([]byte, size)
			for i := range in {
				in[i] = byte(i*7 + i>>12 + int(off))
			}
			up0, down0 := d.StagingBytes()
			require.NoError(t, d.Upload(x.Allocation(), off, in))
			out := make([]byte, size)
			require.NoError(t, d.Download(x.Allocation(), off, out))
			up, down := d.StagingBytes()
			assert.Equal(t, [2]uint64{uint64(size), uint64(size)}, [2]uint64{up - up0, down - down0})
			assert.True(t, string(in) == string(out), "the bytes read back equal those written")
		})
	}
}

func TestHostPathOptions(t *testing.T) {
	_, _, err := testutil.Open(t, vkflow.WithHostReads(vkflow.HostPath(9)))
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	t.Setenv("VKFLOW_HOST_WRITES", "sideways")
	_, _, err = testutil.Open(t)
	require.ErrorIs(t, err, vkflow.ErrInvalid)
	assert.Contains(t, err.Error(), "VKFLOW_HOST_WRITES")
	t.Setenv("VKFLOW_HOST_WRITES", "Ring")
	m, _ := testutil.Manager(t)
	assert.Equal(t, core.PathRing, m.Runtime().WritePath)
}

// Data the device cannot import (here 4 bytes past an aligned address)
// goes through the staging ring instead, both ways, and arrives whole.
func TestStagedUnalignedFallsBackToRing(t *testing.T) {
	m, _ := testutil.Manager(t, vkflow.WithHostReads(vkflow.HostStaged), vkflow.WithHostWrites(vkflow.HostStaged))
	d := m.Runtime()
	if !d.HostImport {
		t.Skip("the device cannot import host memory: every transfer uses the ring")
	}
	const n = 3 << 20
	x, err := tensor.New(m, tensor.Uint8, []int{n})
	require.NoError(t, err)
	buf := make([]byte, n+4096)
	in := buf[4 : 4+n]
	for i := range in {
		in[i] = byte(i*13 + i>>11)
	}
	up0, down0 := d.StagingBytes()
	iup0, idown0 := d.ImportedBytes()
	require.NoError(t, x.WriteBytes(in))
	out := make([]byte, n+4096)[4 : 4+n]
	require.NoError(t, x.ReadBytes(out))
	assert.True(t, string(in) == string(out), "the bytes read back equal those written")
	up, down := d.StagingBytes()
	iup, idown := d.ImportedBytes()
	assert.Equal(t, [4]uint64{n, n, 0, 0}, [4]uint64{up - up0, down - down0, iup - iup0, idown - idown0},
		"ring up, ring down, imported up, imported down")
}
