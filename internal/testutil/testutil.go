package testutil

import (
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/vk"
)

// Validation records validation messages for one test.
type Validation struct {
	mu       sync.Mutex
	t        testing.TB
	messages []vk.Message
	expect   map[string]bool // message IDs a test plants on purpose
}

// Messages returns the messages seen so far that count (see Fails).
func (v *Validation) Messages() []vk.Message {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]vk.Message(nil), v.messages...)
}

// Expect lets messages whose ID contains id pass without failing the test
// (for tests that plant a hazard to show the layer catches it).
func (v *Validation) Expect(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.expect[id] = true
}

// Fails reports whether a debug message fails a test: a warning or error
// from a layer. The loader's own messages do not, whatever their severity:
// with VK_INSTANCE_LAYERS set it warns that it added the layers, which says
// nothing about our use of Vulkan.
func Fails(m vk.Message) bool {
	return m.Severity >= vk.SeverityWarning && !m.FromLoader()
}

func (v *Validation) hook(m vk.Message) {
	if !Fails(m) {
		v.t.Logf("vulkan %s %s (not a failure): %s", m.Severity, m.ID, m.Text)
		return
	}
	v.mu.Lock()
	v.messages = append(v.messages, m)
	for id := range v.expect {
		if strings.Contains(m.ID, id) {
			v.mu.Unlock()
			return
		}
	}
	v.mu.Unlock()
	text := m.Text
	if len(text) > 600 {
		text = text[:600] + "..."
	}
	v.t.Errorf("validation %s %s: %s", m.Severity, m.ID, text)
}

// queueSubmitCheck turns on the layer's hazard checks between command
// buffers at vkQueueSubmit (alpha in the 1.3.239 layer, off by default).
// Without it, a barrier missing between two submits (sequence A writes x,
// sequence B reads it) draws no report.
const queueSubmitCheck = "VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT"

var submitOnce sync.Once

// enableSubmitValidation adds queueSubmitCheck to VK_LAYER_ENABLES, which
// the layer reads when an instance is created. The layer has no other
// switch for it in this version (VK_EXT_layer_settings came later).
func enableSubmitValidation() {
	submitOnce.Do(func() {
		v := os.Getenv("VK_LAYER_ENABLES")
		if strings.Contains(v, queueSubmitCheck) {
			return
		}
		if v != "" {
			v += ","
		}
		os.Setenv("VK_LAYER_ENABLES", v+queueSubmitCheck)
	})
}

// Quiet is a logger that drops everything below errors, so expected
// validation text does not flood test output.
var Quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4}))

// Manager opens a validated Manager and closes it at the end of the test,
// failing the test if Close fails or the layer reports anything.
func Manager(t testing.TB, opts ...vkflow.Option) (*vkflow.Manager, *Validation) {
	t.Helper()
	m, v, err := Open(t, opts...)
	require.NoError(t, err, "opening a Manager (is mesa-vulkan-drivers installed? run make deps)")
	return m, v
}

// Open is Manager for tests that expect vkflow.New to fail: it returns
// New's error. A Manager it opens is validated like Manager's and closed at
// the end of the test (Close is idempotent, so a test may close it first
// and check Close's own result).
func Open(t testing.TB, opts ...vkflow.Option) (*vkflow.Manager, *Validation, error) {
	t.Helper()
	enableSubmitValidation()
	v := &Validation{t: t, expect: map[string]bool{}}
	all := append([]vkflow.Option{
		vkflow.WithValidation(true),
		vkflow.WithDebugHook(v.hook),
		vkflow.WithLogger(Quiet),
	}, opts...)
	m, err := vkflow.New(all...)
	if err != nil {
		return nil, v, err
	}
	t.Cleanup(func() {
		require.NoError(t, m.Close())
	})
	return m, v, nil
}
