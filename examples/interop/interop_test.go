package main

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/interop"
	"github.com/vkflow/vkflow/tensor"
)

// TestInterop runs the example's two processes, as make examples does but
// smaller, under the validation layer (any warning or error fails, in
// either process): the parent here, the child as this test binary run again
// (TestInteropChild). An odd number of steps leaves the last one to the
// child, so the parent checks the child's final writes through its own
// tensor; the size is not a multiple of the kernels' workgroup.
func TestInterop(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	var out, childOut lockedBuilder
	cfg := config{Bytes: 1<<20 + 48, Steps: 5}
	err := parent(mgr, cfg, func(end *os.File) (*exec.Cmd, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInteropChild$", "-test.count=1", "-test.v", "-test.timeout=3m")
		cmd.Env = append(os.Environ(), childEnv+"=1")
		cmd.ExtraFiles = []*os.File{end}
		cmd.Stdout, cmd.Stderr = &childOut, &childOut
		return cmd, cmd.Start()
	}, &out)
	t.Logf("parent:\n%s", out.String())
	require.NoError(t, err, "child output:\n%s", childOut.String())

	text := out.String()
	require.Contains(t, text, "ordering: ")
	if interop.TimelinesSupported(mgr) != nil {
		require.Contains(t, text, "ordering: host relay")
	} else {
		require.Contains(t, text, "ordering: shared timeline")
	}
	require.Contains(t, text, "ok: 6 steps")
	if strings.Contains(text, "parent: maps it at") {
		// Host-mapped memory (lavapipe): both processes name the same file.
		require.Contains(t, text, "the same pages")
	}
}

// TestInteropChild is the example's child process under validation; run
// directly, it skips.
func TestInteropChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("the child process of TestInterop; it runs it")
	}
	mgr, _ := testutil.Manager(t)
	l, err := childLink()
	require.NoError(t, err)
	defer l.c.Close()
	require.NoError(t, child(l, func(config) (*vkflow.Manager, error) { return mgr, nil }, os.Stdout))
}

// TestCheckFindsMismatch: one element off is an error naming it.
func TestCheckFindsMismatch(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	cfg := config{Bytes: 4 * 1000, Steps: 0}
	x, err := tensor.New(mgr, tensor.Uint32, []int{1000})
	require.NoError(t, err)
	s, err := newSide(mgr, cfg, 0, x)
	require.NoError(t, err)
	defer s.close()
	require.NoError(t, s.produce())
	require.NoError(t, s.check(0))
	xs, err := x.Uint32s()
	require.NoError(t, err)
	xs[777]++
	require.NoError(t, tensor.Write(x, xs))
	require.ErrorContains(t, s.check(0), "element 777")
}

type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
