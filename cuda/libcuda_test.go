package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const fakeLibcudaEnv = "VKFLOW_FAKE_LIBCUDA"

// TestFakeLibcuda runs the real cgo binding (dlopen, dlsym of the versioned
// names, the C wrappers, the CUDA structs they fill) against
// testdata/fakecuda.c, a stand-in libcuda.so.1 built here with the C
// compiler that cgo uses. libcuda is loaded once per process, so the test
// runs itself again in a child process with the stand-in on
// LD_LIBRARY_PATH; the stand-in logs what it received, at the byte offsets
// of NVIDIA's cuda.h, and the child checks the log.
func TestFakeLibcuda(t *testing.T) {
	if log := os.Getenv(fakeLibcudaEnv); log != "" {
		fakeLibcudaChild(t, log)
		return
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
		filepath.Join("testdata", "fakecuda.c")).CombinedOutput()
	require.NoError(t, err, "building the stand-in: %s", out)

	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeLibcuda$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+dir, fakeLibcudaEnv+"="+filepath.Join(dir, "log"))
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "child:\n%s", out)
	require.Contains(t, string(out), "--- PASS: TestFakeLibcuda", "the child ran the checks:\n%s", out)
}

// readLog returns the stand-in's log lines since the last call.
type logReader struct {
	path string
	seen int
}

func (l *logReader) next(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(l.path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	out := lines[l.seen:]
	l.seen = len(lines)
	return out
}

func fakeLibcudaChild(t *testing.T, logPath string) {
	log := &logReader{path: logPath}
	drv, err := Open()
	require.NoError(t, err)
	devs, err := drv.Devices()
	require.NoError(t, err)
	require.Len(t, devs, 1)
	assert.Equal(t, "Fake libcuda", devs[0].Name)
	assert.Equal(t, uuidOf(0xa0), devs[0].UUID, "from cuDeviceGetUuid_v2, not v1")
	assert.Equal(t, 7, devs[0].handle)

	ctx, err := drv.DeviceByUUID(uuidOf(0xa0))
	require.NoError(t, err)
	assert.Equal(t, []string{"cuInit flags=0", "cuDeviceGetName len=255 dev=7", "cuDeviceGetName len=255 dev=7",
		"cuDevicePrimaryCtxRetain dev=7"}, log.next(t))

	fd := newFD(t)
	m, err := ctx.ImportMemory(fd, 1<<21, true, 4096, 2048)
	require.NoError(t, err)
	assert.Equal(t, uintptr(0x7f0000000000+4096), m.Ptr())
	lines := log.next(t)
	require.Len(t, lines, 2)
	var gotFD int
	_, err = fmt.Sscanf(lines[0], "cuImportExternalMemory type=1 fd=%d size=2097152 flags=1 zero=1", &gotFD)
	require.NoError(t, err, lines[0])
	assert.NotEqual(t, fd, gotFD, "CUDA gets a duplicate")
	assert.False(t, fdOpen(fd), "the caller's fd was consumed")
	assert.Equal(t, "cuExternalMemoryGetMappedBuffer mem=0xe0000000 offset=4096 size=2048 flags=0 zero=1", lines[1])
	require.NoError(t, m.Close())
	assert.Equal(t, []string{"cuMemFree_v2 ptr=0x7f0000001000", "cuDestroyExternalMemory mem=0xe0000000"}, log.next(t))
	assert.False(t, fdOpen(gotFD), "destroyed with the memory")

	m, err = ctx.ImportMemory(newFD(t), 1<<21, false, 0, 1<<21)
	require.NoError(t, err)
	assert.Contains(t, log.next(t)[0], "size=2097152 flags=0 zero=1")
	require.NoError(t, m.Close())
	log.next(t)

	fd = newFD(t)
	_, err = ctx.ImportMemory(fd, 12345*4096, false, 0, 4096)
	require.EqualError(t, err, "cuda: Context.ImportMemory: cuImportExternalMemory: CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
		"a result the package does not list is named by cuGetErrorName")
	stillOurs(t, fd)
	log.next(t)

	sem, err := ctx.ImportTimeline(newFD(t))
	require.NoError(t, err)
	lines = log.next(t)
	require.Len(t, lines, 1)
	assert.Regexp(t, `^cuImportExternalSemaphore type=9 fd=\d+ flags=0 zero=1$`, lines[0])

	s, err := ctx.NewStream()
	require.NoError(t, err)
	assert.Equal(t, Stream(0x57000000), s)
	require.NoError(t, sem.WaitAsync(s, 42))
	require.NoError(t, sem.SignalAsync(0, 1<<40))
	require.NoError(t, s.Synchronize())
	require.NoError(t, ctx.Synchronize(0))
	assert.Equal(t, []string{
		"cuStreamCreate flags=1",
		"cuWaitExternalSemaphoresAsync n=1 sem=0x5e000000 value=42 stream=0x57000000 flags=0 zero=1",
		"cuSignalExternalSemaphoresAsync n=1 sem=0x5e000000 value=1099511627776 stream=(nil) flags=0 zero=1",
		"cuStreamSynchronize stream=0x57000000",
		"cuStreamSynchronize stream=(nil)",
	}, log.next(t))

	// The stand-in enforces the driver's stream rules: NULL, 1 (legacy), 2
	// (per-thread) or a stream it made. DLPack's -1 is not a handle.
	require.NoError(t, sem.WaitAsync(Stream(1), 43))
	require.NoError(t, sem.WaitAsync(Stream(2), 44))
	require.ErrorContains(t, sem.WaitAsync(Stream(^uintptr(0)), 45), "CUDA_ERROR_INVALID_HANDLE")
	require.ErrorContains(t, ctx.Synchronize(Stream(0x5eed0000)), "CUDA_ERROR_INVALID_HANDLE")
	lines = log.next(t)
	require.Len(t, lines, 6)
	assert.Equal(t, "cuWaitExternalSemaphoresAsync WRONG: invalid stream 0xffffffffffffffff", lines[3])
	assert.Equal(t, "cuStreamSynchronize WRONG: invalid stream 0x5eed0000", lines[5])
	wrong := 2 // the two lines above

	require.NoError(t, ctx.Close())
	assert.Empty(t, log.next(t), "children keep the primary context")
	require.NoError(t, sem.Close())
	require.NoError(t, s.Close())
	assert.Equal(t, []string{"cuDestroyExternalSemaphore sem=0x5e000000", "cuStreamDestroy_v2 stream=0x57000000",
		"cuDevicePrimaryCtxRelease_v2 dev=7 depth=0"}, log.next(t))

	b, err := os.ReadFile(logPath)
	require.NoError(t, err)
	assert.Equal(t, wrong, strings.Count(string(b), "WRONG"))
}
