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

// Messages returns the messages seen so far.
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

func (v *Validation) hook(m vk.Message) {
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

// Quiet is a logger that drops everything below errors, so expected
// validation text does not flood test output.
var Quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 4}))

// Manager opens a validated Manager and closes it at the end of the test,
// failing the test if Close fails or the layer reports anything.
func Manager(t testing.TB, opts ...vkflow.Option) (*vkflow.Manager, *Validation) {
	t.Helper()
	v := &Validation{t: t, expect: map[string]bool{}}
	all := append([]vkflow.Option{
		vkflow.WithValidation(true),
		vkflow.WithDebugHook(v.hook),
		vkflow.WithLogger(Quiet),
	}, opts...)
	m, err := vkflow.New(all...)
	require.NoError(t, err, "opening a Manager (is mesa-vulkan-drivers installed? run make deps)")
	t.Cleanup(func() {
		require.NoError(t, m.Close())
	})
	return m, v
}
