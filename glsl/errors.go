package glsl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vkflow/vkflow/internal/core"
)

// CompileError is a shader that did not compile: the compiler's first error
// with its file and line. It wraps ErrInvalid (vkflow.ErrInvalid).
type CompileError struct {
	Name    string // the file name given with Name
	Line    int    // 1-based line of the first error; 0 when it has none
	Message string // the first error, without file, line and "error: "
	Log     string // the compiler's whole output: every error and warning
}

func (e *CompileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("glsl: %s:%d: error: %s", e.Name, e.Line, e.Message)
	}
	return fmt.Sprintf("glsl: %s: error: %s", e.Name, e.Message)
}

// Unwrap returns ErrInvalid: the source is bad input.
func (e *CompileError) Unwrap() error { return core.ErrInvalid }

// parseLog finds the first error in libshaderc's output. Its lines read
// "name:line: error: message", or "name: error: message" for errors that
// have no line.
func parseLog(name, log string) *CompileError {
	e := &CompileError{Name: name, Log: log}
	for _, l := range strings.Split(log, "\n") {
		rest, ok := strings.CutPrefix(l, name+":")
		if !ok {
			continue
		}
		if n, after, ok := strings.Cut(rest, ":"); ok {
			if line, err := strconv.Atoi(n); err == nil {
				rest = after
				e.Line = line
			}
		}
		if msg, ok := strings.CutPrefix(strings.TrimSpace(rest), "error:"); ok {
			e.Message = strings.TrimSpace(msg)
			return e
		}
		e.Line = 0
	}
	// No line in the usual form: report the first non-empty line.
	for _, l := range strings.Split(log, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			e.Message = l
			return e
		}
	}
	e.Message = "compilation failed with no message"
	return e
}
