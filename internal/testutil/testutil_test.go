package testutil

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow/vk"
)

func TestFails(t *testing.T) {
	loaderWarn := vk.Message{Severity: vk.SeverityWarning, Types: vk.MessageGeneral, ID: "Loader Message",
		Text: `env var 'VK_INSTANCE_LAYERS' defined and adding layers "VK_LAYER_KHRONOS_validation"`}
	tests := []struct {
		name string
		m    vk.Message
		want bool
	}{
		{"validation error", vk.Message{Severity: vk.SeverityError, Types: vk.MessageValidation, ID: "SYNC-HAZARD-READ-AFTER-WRITE"}, true},
		{"validation warning", vk.Message{Severity: vk.SeverityWarning, Types: vk.MessageValidation, ID: "UNASSIGNED-x"}, true},
		{"performance warning", vk.Message{Severity: vk.SeverityWarning, Types: vk.MessagePerformance, ID: "BestPractices-x"}, true},
		{"layer general warning", vk.Message{Severity: vk.SeverityWarning, Types: vk.MessageGeneral, ID: "UNASSIGNED-khronos-validation-createinstance-status-message"}, true},
		{"validation info", vk.Message{Severity: vk.SeverityInfo, Types: vk.MessageValidation, ID: "x"}, false},
		{"loader warning", loaderWarn, false},
		{"loader error", vk.Message{Severity: vk.SeverityError, Types: vk.MessageGeneral, ID: "Loader Message"}, false},
		{"loader info", vk.Message{Severity: vk.SeverityInfo, Types: vk.MessageGeneral, ID: "Loader Message"}, false},
		{"validation message with the loader's ID", vk.Message{Severity: vk.SeverityError, Types: vk.MessageValidation, ID: "Loader Message"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Fails(tt.m))
		})
	}
}

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	errors, logs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func TestHookFailsOnlyOnLayerReports(t *testing.T) {
	r := &recorder{TB: t}
	v := &Validation{t: r, expect: map[string]bool{}}
	v.hook(vk.Message{Severity: vk.SeverityWarning, Types: vk.MessageGeneral, ID: "Loader Message", Text: "adding layers"})
	assert.Empty(t, r.errors, "a loader message is logged, not a failure")
	assert.Len(t, r.logs, 1)
	assert.Empty(t, v.Messages())

	v.hook(vk.Message{Severity: vk.SeverityError, Types: vk.MessageValidation, ID: "SYNC-HAZARD-WRITE-AFTER-READ", Text: "hazard"})
	require.Len(t, r.errors, 1)
	assert.Contains(t, r.errors[0], "SYNC-HAZARD-WRITE-AFTER-READ")

	v.Expect("SYNC-HAZARD")
	v.hook(vk.Message{Severity: vk.SeverityError, Types: vk.MessageValidation, ID: "SYNC-HAZARD-READ-AFTER-WRITE"})
	assert.Len(t, r.errors, 1, "an expected message does not fail")
	assert.Len(t, v.Messages(), 2)
}

// With VK_INSTANCE_LAYERS set the loader warns that it added the layer; a
// validated Manager still opens and closes without failing the test.
func TestInstanceLayersEnv(t *testing.T) {
	t.Setenv("VK_INSTANCE_LAYERS", vk.ValidationLayer)
	m, v := Manager(t)
	require.NoError(t, m.Close())
	assert.Empty(t, v.Messages())
}

var sink []byte

func TestAllocsCountsRareAllocations(t *testing.T) {
	assert.Zero(t, Allocs(1000, func() {}))
	i := 0
	rare := func() {
		i++
		if i%100 == 0 {
			sink = make([]byte, 64)
		}
	}
	assert.Zero(t, testing.AllocsPerRun(1000, rare), "AllocsPerRun rounds one in 100 down to zero")
	assert.Equal(t, uint64(10), Allocs(1000, rare), "Allocs counts each")
}
