package glsl

import (
	"fmt"
	"testing"
)

// BenchmarkCompile times one small elementwise shader: cold (a new source
// each time, so the compiler runs), from memory, and from the disk cache
// (memory dropped before each call).
func BenchmarkCompile(b *testing.B) {
	opts := []Option{Define("N", "1024"), Define("OFFSET", "1.0")}
	b.Run("cold", func(b *testing.B) {
		isolate(b)
		for i := range b.N {
			if _, err := Compile(fmt.Sprintf("%s// %d\n", scaleSrc, i), opts...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("memory", func(b *testing.B) {
		isolate(b)
		if _, err := Compile(scaleSrc, opts...); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := Compile(scaleSrc, opts...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("disk", func(b *testing.B) {
		isolate(b)
		if _, err := Compile(scaleSrc, opts...); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for range b.N {
			isolateMemory()
			if _, err := Compile(scaleSrc, opts...); err != nil {
				b.Fatal(err)
			}
		}
	})
}
