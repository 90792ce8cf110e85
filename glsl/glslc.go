package glsl

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// glslc compiles by running the glslc program, at most one process per CPU
// at a time.
type glslc struct {
	path    string
	version string
	slots   chan struct{}
	env     []string // the process environment; nil: this one's
}

// findGlslc looks the program up on PATH and asks its version.
func findGlslc(name string) (*glslc, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("no %s on PATH", name)
	}
	out, err := exec.Command(path, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", path, err)
	}
	return &glslc{
		path:    path,
		version: "glslc " + strings.Join(strings.Fields(string(out)), " ") + " " + fileVersion(path),
		slots:   make(chan struct{}, runtime.NumCPU()),
	}, nil
}

func (g *glslc) String() string  { return g.path }
func (g *glslc) Version() string { return g.version }

// stdinName is what glslc calls a source read from standard input.
const stdinName = "<stdin>"

// Args are the glslc arguments that match the libshaderc options: compute
// stage, Vulkan 1.2, SPIR-V 1.5, source on stdin, module on stdout.
func (g *glslc) args(o *options) []string {
	args := []string{"-fshader-stage=compute", "-fentry-point=main", "--target-env=vulkan1.2", "--target-spv=spv1.5"}
	if o.debug {
		args = append(args, "-O0", "-g")
	} else {
		args = append(args, "-O")
	}
	for _, d := range o.defines {
		args = append(args, "-D"+d.name+"="+d.value)
	}
	return append(args, "-o", "-", "-")
}

func (g *glslc) Compile(src string, o *options) ([]byte, error) {
	g.slots <- struct{}{}
	defer func() { <-g.slots }()
	cmd := exec.Command(g.path, g.args(o)...)
	cmd.Env = g.env
	cmd.Stdin = strings.NewReader(src)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	log := strings.ReplaceAll(stderr.String(), stdinName+":", o.name+":")
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1 && strings.Contains(log, "error"):
		return nil, parseLog(o.name, log)
	default:
		return nil, fmt.Errorf("glsl: %s: %s failed: %w: %s", o.name, g.path, err, strings.TrimSpace(log))
	}
	if stdout.Len() == 0 {
		return nil, fmt.Errorf("glsl: %s: %s wrote no module", o.name, g.path)
	}
	return stdout.Bytes(), nil
}
