package glsl

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// backends returns every compiler this machine has. Debian 12's libshaderc
// loads only with glslang preloaded, so there the libshaderc case is
// skipped unless the test runs with, for example:
//
//	L=/usr/lib/x86_64-linux-gnu
//	g++ -shared -o /tmp/libglslang-all.so -Wl,--whole-archive $L/libglslang.a $L/libSPIRV.a \
//		$L/libSPIRV-Tools-opt.a $L/libSPIRV-Tools.a -Wl,--no-whole-archive
//	LD_PRELOAD=/tmp/libglslang-all.so VKFLOW_GLSL_ALL_BACKENDS=1 go test ./glsl
func backends(t testing.TB) map[string]backend {
	t.Helper()
	out := map[string]backend{}
	if s, err := openShaderc("libshaderc.so.1", "libshaderc.so"); err == nil {
		out["libshaderc"] = s
	} else {
		t.Logf("libshaderc: %v", err)
	}
	if g, err := findGlslc("glslc"); err == nil {
		// glslc has its own glslang: a preloaded one would replace it.
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "LD_PRELOAD=") {
				g.env = append(g.env, kv)
			}
		}
		out["glslc"] = g
	} else {
		t.Logf("glslc: %v", err)
	}
	return out
}

// TestBackends compiles with each compiler directly: the same modules'
// shape, the same first error and line, the same warnings-only success.
func TestBackends(t *testing.T) {
	all := backends(t)
	require.NotEmpty(t, all)
	if os.Getenv("VKFLOW_GLSL_ALL_BACKENDS") != "" {
		require.Len(t, all, 2, "VKFLOW_GLSL_ALL_BACKENDS asks for both compilers")
	}
	tests := []struct {
		name string
		src  string
		opts options
		line int
		msg  string
	}{
		{"good", scaleSrc, options{name: "a.comp", defines: []define{{"N", "4"}, {"OFFSET", "1.0"}}}, 0, ""},
		{"debug", scaleSrc, options{name: "a.comp", debug: true, defines: []define{{"N", "4"}, {"OFFSET", "1.0"}}}, 0, ""},
		{"warning", "#version 450\n#extension GL_EXT_no_such_thing : warn\nlayout(local_size_x = 1) in;\nvoid main() {}\n", options{name: "w.comp"}, 0, ""},
		{"undefined macro", scaleSrc, options{name: "b.comp", defines: []define{{"N", "4"}}}, 11, "'OFFSET' : undeclared identifier"},
		{"valueless macro", scaleSrc, options{name: "c.comp", defines: []define{{"N", "4"}, {"OFFSET", ""}}}, 11, "syntax error"},
		{"missing #version", "layout(local_size_x = 1) in;\nvoid main() {}\n", options{name: "d.comp"}, 0, "#version"},
		{"no entry point", "#version 450\nlayout(local_size_x = 1) in;\nvoid f() {}\n", options{name: "e.comp"}, 0, "Missing entry point"},
	}
	for name, b := range all {
		t.Run(name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					code, err := b.Compile(tt.src, &tt.opts)
					if tt.msg == "" {
						require.NoError(t, err)
						requireModule(t, code)
						return
					}
					var ce *CompileError
					require.ErrorAs(t, err, &ce)
					assert.Equal(t, tt.opts.name, ce.Name)
					assert.Equal(t, tt.line, ce.Line, ce.Log)
					assert.Contains(t, ce.Message, tt.msg)
				})
			}
		})
	}
}
