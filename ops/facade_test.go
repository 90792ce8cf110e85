package ops_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// opPackageOnly are the core's exported names that are for the op
// packages (linalg, fft) building on it, not for users: the facade leaves
// them out.
var opPackageOnly = []string{
	"AxisAttr", "BitTypes", "BroadcastShapes", "Builtin", "BuiltinOne", "Cfn", "ComplexGLSL",
	"ComputeDtype", "ComputeType", "ContainsInt", "Contiguous", "DefNoGrad", "DefSchema", "DefVJP",
	"GLSLType", "GatherGLSL", "Guard", "Header", "IndexGLSL", "Inputs", "InvPerm", "IsFloat",
	"KeptShape", "KindMax", "KindMin", "KindSum", "LocalSize", "MathF32", "MathF64", "MatmulGridLimit", "MaxRank",
	"Merge", "NewOp", "NormAxes", "Numel", "OrderedAxes", "OutAt", "PassSpec", "PowF32", "PowF32Lite",
	"PowF64", "Ptr", "RedLayout", "ReduceKind", "ReducePlain", "ReducedShape", "Repeated", "RowMajor",
	"StridesFor", "Tiles", "TooMany",
}

// exported returns the exported package-level names declared in dir's
// non-test Go files.
func exported(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	fset := token.NewFileSet()
	out := map[string]bool{}
	for _, e := range ents {
		n := e.Name()
		if !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					out[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							out[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if id.IsExported() {
								out[id.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return out
}

// newInOpPackages are the names linalg and fft gained after their
// functions moved out of ops: they never were in ops, so they have no
// deprecated forward there.
var newInOpPackages = []string{"Eig", "Eigvals"}

// TestFacadeCoversCore: every exported name of ops/internal/opcore is in
// the ops facade, or is one of the op packages' building blocks
// (opPackageOnly); a name added to the core for users and not to the
// facade fails here. The deprecated forwards of linalg and fft are all
// there too, but for the names new in those packages (newInOpPackages).
func TestFacadeCoversCore(t *testing.T) {
	facade := exported(t, ".")
	for n := range exported(t, filepath.Join("internal", "opcore")) {
		if slices.Contains(opPackageOnly, n) {
			assert.False(t, facade[n], "%s is for op packages, yet the facade has it", n)
			continue
		}
		assert.True(t, facade[n], "opcore.%s is not in the ops facade (add it, or to opPackageOnly)", n)
	}
	for _, dir := range []string{"linalg", "fft"} {
		for n := range exported(t, dir) {
			if slices.Contains(newInOpPackages, n) {
				assert.False(t, facade[n], "%s.%s is new in %s, yet ops forwards it", dir, n, dir)
				continue
			}
			assert.True(t, facade[n], "%s.%s has no deprecated forward in ops", dir, n)
		}
	}
}
