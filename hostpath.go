package vkflow

import (
	"fmt"
	"os"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
)

// HostPath is how the host reads or writes tensor memory: the accessors,
// Write, ReadBytes and WriteBytes of package tensor, and what the C API,
// DLPack's host exports and the Python arrays build on them.
type HostPath = core.HostPath

// Host paths, for WithHostReads and WithHostWrites.
const (
	// HostAuto, the default, reads through the mapping only memory the
	// host caches: lavapipe's and integrated GPUs' memory, host memory.
	// Reads of uncached memory (a discrete GPU's device-local memory mapped
	// through a resizable BAR, which the CPU reads at a small fraction of
	// the bus's speed) are GPU copies into host memory, as HostStaged.
	// Writes go through the mapping wherever there is one (write-combined
	// stores stream at bus speed), else they are staged.
	HostAuto = core.PathAuto
	// HostMapped goes through the mapping wherever there is one.
	HostMapped = core.PathMapped
	// HostStaged is a GPU copy even where there is a mapping. The host's
	// data is imported (VK_EXT_external_memory_host) so that the copy
	// engine reads or writes it directly, where the device has the
	// extension, the transfer is at least 1 MiB and the data is aligned as
	// the device needs; otherwise it passes through the device's staging
	// ring, in chunks that overlap the GPU's copy with the host's.
	HostStaged = core.PathStaged
	// HostRing is HostStaged without the import: always the staging ring.
	HostRing = core.PathRing
)

// WithHostReads sets how the host reads tensors (default HostAuto).
// A tensor read through a copy has Mapped() false: its accessors return
// copies, and DLPack exports it to the CPU through a copy. The environment
// variable VKFLOW_HOST_READS (auto, mapped, staged or ring) overrides it,
// for programs that use vkflow from C or Python. An unknown path is
// ErrInvalid.
func WithHostReads(p HostPath) Option { return func(c *config) { c.reads = p } }

// WithHostWrites sets how the host writes tensors (default HostAuto). The
// environment variable VKFLOW_HOST_WRITES overrides it, as
// VKFLOW_HOST_READS does WithHostReads.
func WithHostWrites(p HostPath) Option { return func(c *config) { c.writes = p } }

// hostPaths applies VKFLOW_HOST_READS and VKFLOW_HOST_WRITES to cfg and
// checks both paths.
func hostPaths(cfg *config) error {
	for _, e := range []struct {
		env, option string
		p           *HostPath
	}{{"VKFLOW_HOST_READS", "WithHostReads", &cfg.reads}, {"VKFLOW_HOST_WRITES", "WithHostWrites", &cfg.writes}} {
		if v := strings.TrimSpace(os.Getenv(e.env)); v != "" {
			p, ok := parseHostPath(v)
			if !ok {
				return fmt.Errorf("%w: %s=%q: not a host path (auto, mapped, staged or ring)", ErrInvalid, e.env, v)
			}
			*e.p = p
		}
		if !e.p.Valid() {
			return fmt.Errorf("%w: %s(%v): unknown host path", ErrInvalid, e.option, *e.p)
		}
	}
	return nil
}

func parseHostPath(s string) (HostPath, bool) {
	for _, p := range []HostPath{HostAuto, HostMapped, HostStaged, HostRing} {
		if strings.EqualFold(s, p.String()) {
			return p, true
		}
	}
	return 0, false
}
