package core

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/vkflow/vkflow/vk"
)

// importMin is the smallest transfer that imports the host's data instead
// of going through the staging ring: below it, the import's cost (a
// vkAllocateMemory that pins the pages) outweighs the memcpy it saves.
const importMin = 1 << 20

// direct copies between a and the host's data without the staging ring,
// where the data can be imported (VK_EXT_external_memory_host): the copy
// engine then reads or writes the host's memory itself, and the host
// copies nothing. It reports false, having done nothing, when the path is
// PathRing, the transfer is small, or the data cannot be imported (no
// extension, alignment): the caller uses the ring. Called with mu held.
//
// A copy that times out may still write the data: the import and the
// data stay referenced (stuckCopy) until the copy completes.
func (s *staging) direct(ctx context.Context, a *Allocation, offset uint64, data []byte, up bool) (bool, error) {
	d := s.dev
	path := d.ReadPath
	if up {
		path = d.WritePath
	}
	if path == PathRing || !d.HostImport || len(data) < importMin {
		return false, nil
	}
	imp, err := d.ImportHost(unsafe.Pointer(unsafe.SliceData(data)), uint64(len(data)), vk.BufferUsageTransferSrc|vk.BufferUsageTransferDst)
	if err != nil {
		d.Log.Debug("vkflow: staging: the host's data cannot be imported; copying through the ring", "bytes", len(data), "err", err)
		return false, nil
	}
	reg := vk.CopyRegion{SrcOffset: 0, DstOffset: offset, Size: uint64(len(data))}
	src, dst := imp.Buffer, a.Buffer
	if !up {
		reg = vk.CopyRegion{SrcOffset: offset, DstOffset: 0, Size: uint64(len(data))}
		src, dst = a.Buffer, imp.Buffer
	}
	v, err := s.copyCmd(s.cmds[0], src, dst, reg)
	if err != nil {
		d.Free(imp)
		return true, err
	}
	q := d.queues[0]
	if err := q.Wait(ctx, v); err != nil {
		s.stuckMu.Lock()
		s.stuck = &stuckCopy{alloc: a, value: v, imp: imp, keep: data}
		s.stuckMu.Unlock()
		return true, fmt.Errorf("vkflow: staging %s device memory (%d bytes at offset %d, directly from an import of the host's memory): waiting for the copy (queue 0 value %d, at %d now): %w",
			direction(up), len(data), offset, v, q.Completed(), err)
	}
	d.Free(imp)
	if up {
		s.importedUp += uint64(len(data))
	} else {
		s.importedDown += uint64(len(data))
	}
	return true, nil
}
