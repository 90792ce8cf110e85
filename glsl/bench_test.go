package glsl

import (
	"fmt"
	"sync"
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

// BenchmarkShadercCompiler compares ways to use libshaderc compiler objects
// from parallel callers: a new object per call, one shared object behind a
// mutex, and the pool Compile uses.
func BenchmarkShadercCompiler(b *testing.B) {
	s, err := openShaderc("libshaderc.so.1", "libshaderc.so")
	if err != nil {
		b.Skip(err)
	}
	o := &options{name: "k.comp", defines: []define{{"N", "64"}, {"OFFSET", "1.0"}}}
	parallel := func(b *testing.B, f func() error) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := f(); err != nil {
					b.Error(err)
				}
			}
		})
	}
	b.Run("new per call", func(b *testing.B) {
		parallel(b, func() error {
			comp := newCompiler()
			defer freeCompiler(comp)
			_, err := compileWith(comp, scaleSrc, o)
			return err
		})
	})
	b.Run("shared with mutex", func(b *testing.B) {
		var mu sync.Mutex
		comp := newCompiler()
		defer freeCompiler(comp)
		parallel(b, func() error {
			mu.Lock()
			defer mu.Unlock()
			_, err := compileWith(comp, scaleSrc, o)
			return err
		})
	})
	b.Run("pool", func(b *testing.B) {
		parallel(b, func() error {
			_, err := s.Compile(scaleSrc, o)
			return err
		})
	})
}
