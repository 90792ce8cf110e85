package dlpack_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/cuda"
	"github.com/vkflow/vkflow/dlpack"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
)

// standInEnv names the stand-in libcuda's log; its presence marks the
// child process of TestExportCUDAStandIn.
const standInEnv = "VKFLOW_FAKE_LIBCUDA"

// TestExportCUDAStandIn runs kDLCUDA exports on lavapipe against
// cuda/testdata/fakecuda.c, a stand-in libcuda.so.1 whose device has the
// Vulkan device's UUID and whose mapped buffers are the exported memfds
// mapped into this process: the bytes at a kDLCUDA tensor's data pointer
// are what a CUDA kernel would read. libcuda is loaded once per process, so
// the test runs itself again in a child with the stand-in on
// LD_LIBRARY_PATH. lavapipe cannot share timelines, so every ordering the
// export promises is kept on the host: what the test checks is that the
// bytes are right when Export returns.
func TestExportCUDAStandIn(t *testing.T) {
	if log := os.Getenv(standInEnv); log != "" {
		standInChild(t, log)
		return
	}
	if testing.Short() {
		t.Skip("builds a shared library and moves 64 MiB tensors")
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s) to build the stand-in libcuda.so.1: %v", cc, err)
	}
	dir := t.TempDir()
	out, err := exec.Command(cc, "-Wall", "-Werror", "-shared", "-fPIC", "-o", filepath.Join(dir, "libcuda.so.1"),
		filepath.Join("..", "cuda", "testdata", "fakecuda.c")).CombinedOutput()
	require.NoError(t, err, "building the stand-in: %s", out)
	cmd := exec.Command(os.Args[0], "-test.run=^TestExportCUDAStandIn$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, standInEnv+"="+filepath.Join(dir, "log"),
		"VKFLOW_FAKE_CUDA_MAP=1")
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestExportCUDAStandIn", "the child ran the checks:\n%s", out)
}

func standInChild(t *testing.T, logPath string) {
	m, _ := testutil.Manager(t)
	uuid := m.Device().DeviceUUID
	require.NoError(t, os.Setenv("VKFLOW_FAKE_CUDA_UUID", hex.EncodeToString(uuid[:])))
	drv, err := cuda.Open()
	require.NoError(t, err, "the stand-in libcuda.so.1")
	cctx, err := drv.DeviceByUUID(uuid)
	require.NoError(t, err)
	defer cctx.Close()
	user, err := cctx.NewStream()
	require.NoError(t, err)
	defer user.Close()

	const n = 64 << 20    // the 64 MiB
	const busyCopies = 16 // 4 was not always enough to keep the queue busy through Export
	pattern := make([]byte, n)
	for i := range pattern {
		pattern[i] = byte(i*7 + 1) // no zero byte near the end
	}
	src, err := tensor.New(m, tensor.Uint8, []int{n})
	require.NoError(t, err)
	defer src.Close()
	require.NoError(t, src.WriteBytes(pattern))
	// busy is unrelated GPU work queued ahead of the export's own work, so
	// that work is still running when Export returns unless Export waits.
	a, err := tensor.New(m, tensor.Uint8, []int{n}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	defer a.Close()
	b, err := tensor.New(m, tensor.Uint8, []int{n}, tensor.In(tensor.Storage))
	require.NoError(t, err)
	defer b.Close()
	busy := func() sequence.Pending {
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		defer s.Close()
		for range busyCopies / 2 {
			s.Copy(a, b).Copy(b, a)
		}
		p := s.EvalAsync()
		require.NoError(t, p.Err())
		return p
	}

	streams := []struct {
		name   string
		stream int64
	}{
		{"-1 (no synchronization)", -1},
		{"0 (None: legacy default)", 0},
		{"1 (legacy default)", 1},
		{"2 (per-thread default)", 2},
		{"user stream", int64(user)},
	}
	for _, s := range streams {
		for _, exportable := range []bool{false, true} {
			path := "copy (memory not exportable)"
			if exportable {
				path = "exported memory"
			}
			t.Run(s.name+"/"+path, func(t *testing.T) {
				var opts []tensor.Option
				if exportable {
					opts = append(opts, tensor.Exportable())
				}
				x, err := tensor.New(m, tensor.Uint8, []int{n}, opts...)
				require.NoError(t, err)
				defer x.Close()
				var write *sequence.Pending
				if exportable {
					// The tensor's own pending write, queued behind busy work:
					// the ready point the consumer's stream is ordered after.
					busy()
					seq, err := sequence.New(m, 0)
					require.NoError(t, err)
					p := seq.Copy(src, x).EvalAsync()
					require.NoError(t, p.Err())
					write = &p
					require.NoError(t, seq.Close())
				} else {
					// Written and done; the export's own copy is queued
					// behind busy work.
					require.NoError(t, x.WriteBytes(pattern))
					busy()
				}
				before := dlpack.Live()
				mt, err := dlpack.Export(context.Background(), x, dlpack.Options{
					Device: &dlpack.Device{Type: dlpack.CUDA, ID: 0}, Stream: s.stream, MaxVersion: &dlpack.Version{Major: 1}})
				require.NoError(t, err)
				info := mt.Describe()
				tail := unsafe.Slice((*byte)(unsafe.Add(info.Data, n-4096)), 4096)
				got := bytes.Clone(tail) // at once: what the consumer sees on return
				assert.Equal(t, dlpack.Device{Type: dlpack.CUDA, ID: 0}, info.Device)
				assert.Equal(t, !exportable, info.Flags&dlpack.FlagIsCopied != 0, "IS_COPIED")
				if exportable && s.stream == -1 {
					// -1: the consumer orders itself after the tensor's
					// writes (here on the host); the export promises nothing.
					require.NoError(t, write.Wait(context.Background()))
					got = bytes.Clone(tail)
				}
				assert.True(t, bytes.Equal(pattern[n-4096:], got),
					"the last bytes at the data pointer when Export returned: %x..., want %x...", got[4088:], pattern[n-8:])
				if write != nil {
					require.NoError(t, write.Wait(context.Background()))
				}
				mt.Delete()
				assert.Equal(t, before, dlpack.Live())
			})
		}
	}
	b2, err := os.ReadFile(logPath)
	require.NoError(t, err)
	for _, line := range strings.Split(string(b2), "\n") {
		assert.NotContains(t, line, "WRONG", "the stand-in driver refused a call")
	}
}
