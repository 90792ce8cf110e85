// Command opsdoc writes docs/OPS_REGISTRY.md, the description of every
// built-in op generated from the op schemas (ops.RegistryMarkdown). Run
// it from the repository root: go run ./tools/opsdoc.
package main

import (
	"fmt"
	"os"

	"github.com/vkflow/vkflow/ops"
)

func main() {
	if err := os.WriteFile("docs/OPS_REGISTRY.md", []byte(ops.RegistryMarkdown()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "opsdoc:", err)
		os.Exit(1)
	}
}
