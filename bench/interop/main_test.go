package main

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
)

// TestHandoffSmoke runs the benchmark small (1 MiB + 64 bytes in pieces of
// at most 512 KiB: three tensors, the last one short; 1 round of 2
// iterations) with both processes under the validation layer, so that make
// test keeps the bench program working and validation-clean. The child is
// this test binary run again (TestHandoffChild).
func TestHandoffSmoke(t *testing.T) {
	mgr, _ := testutil.Manager(t)
	var childOut strings.Builder
	res, err := parent(mgr, 1<<20+64, 512<<10, 1, 2, func(end *os.File) *exec.Cmd {
		c := exec.Command(os.Args[0], "-test.run=^TestHandoffChild$", "-test.count=1", "-test.timeout=3m")
		c.Env = append(os.Environ(), childEnv+"=1")
		c.ExtraFiles = []*os.File{end}
		c.Stdout, c.Stderr = &childOut, &childOut
		return c
	})
	require.NoError(t, err)
	require.EqualValues(t, 3, res.pieces)
	var table strings.Builder
	res.print(&table, mgr)
	t.Log("\n" + table.String())
	require.Contains(t, table.String(), "| memcpy 1048640 bytes")
	require.NotContains(t, childOut.String(), "FAIL", "child output:\n%s", childOut.String())
}

// TestHandoffChild is the benchmark's child under validation; run directly,
// it skips.
func TestHandoffChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("the child process of TestHandoffSmoke; it runs it")
	}
	mgr, _ := testutil.Manager(t)
	c, err := net.FileConn(os.NewFile(3, "socket"))
	require.NoError(t, err)
	require.NoError(t, child(mgr, c.(*net.UnixConn)))
}
