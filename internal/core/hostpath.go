package core

import (
	"strconv"

	"github.com/vkflow/vkflow/vk"
)

// HostPath is how host reads or writes of a buffer reach its memory.
type HostPath int

// Host paths.
const (
	// PathAuto reads through the mapping only where the memory is
	// host-cached (or is host memory vkflow imported), and otherwise by
	// a GPU copy into host memory: on a discrete GPU the CPU reads
	// uncached device memory (a resizable BAR) at a fraction of the bus's
	// speed. Writes go through the mapping wherever there is one
	// (write-combined stores stream at bus speed) and are staged
	// elsewhere.
	PathAuto HostPath = iota
	// PathMapped goes through the mapping wherever there is one.
	PathMapped
	// PathStaged goes through a GPU copy, even for mapped memory: the
	// host's data is imported (VK_EXT_external_memory_host) and copied
	// directly where it can be, else it passes through the staging ring.
	PathStaged
	// PathRing is PathStaged without the import: always the staging
	// ring, in chunks that overlap the GPU's copy with the host's.
	PathRing
)

func (p HostPath) String() string {
	switch p {
	case PathAuto:
		return "auto"
	case PathMapped:
		return "mapped"
	case PathStaged:
		return "staged"
	case PathRing:
		return "ring"
	}
	return "HostPath(" + strconv.Itoa(int(p)) + ")"
}

// Valid reports whether p is one of the paths.
func (p HostPath) Valid() bool { return p >= PathAuto && p <= PathRing }

// cached reports whether a's memory type is host-cached.
func (a *Allocation) cached() bool {
	return a.block != nil && a.block.flags&vk.MemoryHostCached != 0
}

// ReadsMapped reports whether host reads of a go through its mapping (and
// the tensor accessors may alias it); otherwise they are GPU copies
// (Download).
func (d *Device) ReadsMapped(a *Allocation) bool {
	if a.Mapped == nil {
		return false
	}
	if a.block != nil && a.block.hostMem {
		return true // the host's own memory: nothing to copy it through
	}
	switch d.ReadPath {
	case PathMapped:
		return true
	case PathStaged, PathRing:
		return false
	}
	return a.cached()
}

// WritesMapped reports whether host writes of a go through its mapping;
// otherwise they are GPU copies (Upload).
func (d *Device) WritesMapped(a *Allocation) bool {
	if a.Mapped == nil {
		return false
	}
	if a.block != nil && a.block.hostMem {
		return true
	}
	return d.WritePath == PathAuto || d.WritePath == PathMapped
}
