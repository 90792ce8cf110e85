package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/core"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/timeline"
	"github.com/vkflow/vkflow/vk"
)

// VK_KHR_external_semaphore_fd is not enough to export a timeline: the
// driver must report opaque fds exportable and importable for timeline
// semaphores (vkGetPhysicalDeviceExternalSemaphoreProperties with the
// timeline type chained). A device that has the extension but shares
// binary semaphores only gets ErrUnsupported naming the extension and the
// driver's answer, before any semaphore is created; lavapipe lacks the
// extension, so the test pretends it is enabled and stands in for the
// driver's answer.
func TestTimelineSupportQuery(t *testing.T) {
	m, _ := testutil.Manager(t)
	d := m.Runtime()
	if d.ExternalSemaphoreFD {
		t.Skip("this device has VK_KHR_external_semaphore_fd: interop.TestTimelineRoundTrip covers it")
	}
	d.ExternalSemaphoreFD = true // vk's calls still refuse: the extension is not enabled
	defer func() { d.ExternalSemaphoreFD = false }()
	for _, tc := range []struct {
		name   string
		answer vk.ExternalSupport
	}{
		{"binary semaphores only", vk.ExternalSupport{}},
		{"importable only", vk.ExternalSupport{Importable: true}},
		{"exportable only", vk.ExternalSupport{Exportable: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []uint32
			defer core.ForceTimelineSupport(tc.answer, &asked)()
			err := d.TimelineSupport()
			assert.ErrorIs(t, err, vkflow.ErrUnsupported)
			assert.ErrorContains(t, err, vk.ExternalSemaphoreFDExtension)
			assert.ErrorContains(t, err, "vkGetPhysicalDeviceExternalSemaphoreProperties")
			assert.Equal(t, []uint32{vk.ExternalSemaphoreOpaqueFD}, asked, "asked for opaque fds")

			before := d.MemStats()
			tl, err := timeline.New(m, 0, timeline.Exportable())
			assert.ErrorIs(t, err, vkflow.ErrUnsupported)
			assert.Nil(t, tl)
			assert.Equal(t, before, d.MemStats())
		})
	}
	var asked []uint32
	defer core.ForceTimelineSupport(vk.ExternalSupport{Exportable: true, Importable: true}, &asked)()
	require.NoError(t, d.TimelineSupport(), "a driver that shares timelines")
}
