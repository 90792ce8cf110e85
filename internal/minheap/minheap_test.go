package minheap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// Push then Pop, and Heapify then Pop, return any input in order
// (duplicates included), for sizes around the heap's level boundaries.
func TestOrder(t *testing.T) {
	less := func(a, b int) bool { return a < b }
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 70 {
		in := make([]int, n)
		for i := range in {
			in[i] = r.IntN(20)
		}
		want := slices.Sorted(slices.Values(in))
		var pushed []int
		for _, x := range in {
			pushed = Push(pushed, x, less)
		}
		for name, h := range map[string][]int{"Push": pushed, "Heapify": Heapify(slices.Clone(in), less)} {
			var got []int
			for len(h) > 0 {
				var x int
				h, x = Pop(h, less)
				got = append(got, x)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s, n=%d: popped %v, want %v", name, n, got, want)
			}
		}
	}
}
