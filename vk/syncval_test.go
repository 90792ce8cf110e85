package vk_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/vk"
)

// TestSyncValidationCatchesPlantedHazard shows the suite's safety net is
// live: with synchronization validation on, a fill followed by a copy that
// reads the filled buffer without a barrier is reported, and the same
// commands with a barrier are not.
func TestSyncValidationCatchesPlantedHazard(t *testing.T) {
	for _, withBarrier := range []bool{false, true} {
		var mu sync.Mutex
		var ids []string
		inst, err := vk.CreateInstance(vk.InstanceConfig{
			AppName: "syncval", APIVersion: vk.MakeVersion(1, 2, 0),
			Layers: []string{vk.ValidationLayer}, Extensions: []string{vk.DebugUtilsExtension},
			SyncValidation: true,
			Debug: func(m vk.Message) {
				if !testutil.Fails(m) {
					return // the loader's own messages (VK_INSTANCE_LAYERS)
				}
				mu.Lock()
				ids = append(ids, m.ID)
				mu.Unlock()
			},
		})
		require.NoError(t, err)
		pds, err := inst.PhysicalDevices()
		require.NoError(t, err)
		info, err := vk.Describe(pds[0])
		require.NoError(t, err)
		dev, err := vk.CreateDevice(pds[0], vk.DeviceConfig{
			Queues: []vk.QueueRequest{{Family: 0, Count: 1}}, Features: vk.Features{TimelineSemaphore: true},
			APIVersion: min(info.APIVersion, vk.MakeVersion(1, 2, 0)),
		})
		require.NoError(t, err)
		q := dev.Queue(0, 0)

		const size = 4096
		usage := uint32(vk.BufferUsageTransferSrc | vk.BufferUsageTransferDst)
		src, err := dev.CreateBuffer(size, usage)
		require.NoError(t, err)
		dst, err := dev.CreateBuffer(size, usage)
		require.NoError(t, err)
		req := dev.BufferMemoryRequirements(src)
		typeIdx := -1
		for i := range info.MemoryTypes {
			if req.TypeBits&(1<<i) != 0 {
				typeIdx = i
				break
			}
		}
		require.GreaterOrEqual(t, typeIdx, 0)
		mem, err := dev.AllocateMemory(2*size, uint32(typeIdx))
		require.NoError(t, err)
		require.NoError(t, dev.BindBufferMemory(src, mem, 0))
		require.NoError(t, dev.BindBufferMemory(dst, mem, size))
		pool, err := dev.CreateCommandPool(0, 0)
		require.NoError(t, err)
		cmd, err := dev.AllocateCommandBuffer(pool)
		require.NoError(t, err)
		sem, err := dev.CreateTimeline(0)
		require.NoError(t, err)

		require.NoError(t, vk.BeginCommandBuffer(cmd, vk.CommandBufferOneTimeSubmit))
		vk.CmdFillBuffer(cmd, src, 0, size, 7)
		if withBarrier {
			vk.CmdPipelineBarrier(cmd, vk.StageTransfer, vk.StageTransfer, vk.AccessTransferWrite, vk.AccessTransferRead, nil)
		}
		vk.CmdCopyBuffer(cmd, src, dst, []vk.CopyRegion{{Size: size}})
		require.NoError(t, vk.EndCommandBuffer(cmd))
		require.NoError(t, vk.QueueSubmitSignal(q, cmd, sem, 1))
		require.NoError(t, dev.WaitSemaphore(sem, 1, ^uint64(0)))

		dev.DestroySemaphore(sem)
		dev.DestroyCommandPool(pool)
		dev.DestroyBuffer(src)
		dev.DestroyBuffer(dst)
		dev.FreeMemory(mem)
		dev.Destroy()
		inst.Destroy()

		mu.Lock()
		joined := strings.Join(ids, " ")
		mu.Unlock()
		if withBarrier {
			assert.Empty(t, ids, "a correct barrier draws no report")
		} else {
			assert.Contains(t, joined, "SYNC-HAZARD-READ-AFTER-WRITE", "the planted hazard is reported")
		}
	}
}
