package glsl_test

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/glsl"
)

func ExampleCompile() {
	const src = `#version 450
layout(local_size_x = 64) in;
layout(binding = 0) buffer X { float x[]; };
void main() {
	x[gl_GlobalInvocationID.x] *= SCALE;
}
`
	code, err := glsl.Compile(src, glsl.Name("scale.comp"), glsl.Define("SCALE", "2.0"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("SPIR-V magic %#08x, version %#x\n", binary.LittleEndian.Uint32(code), binary.LittleEndian.Uint32(code[4:]))

	// Without the macro, SCALE is an undeclared identifier on line 5.
	_, err = glsl.Compile(src, glsl.Name("scale.comp"))
	var ce *glsl.CompileError
	if errors.As(err, &ce) {
		fmt.Println("line", ce.Line)
	}
	fmt.Println(err)
	fmt.Println(errors.Is(err, vkflow.ErrInvalid))
	// Output:
	// SPIR-V magic 0x07230203, version 0x10500
	// line 5
	// glsl: scale.comp:5: error: 'SCALE' : undeclared identifier
	// true
}
