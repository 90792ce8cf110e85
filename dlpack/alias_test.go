package dlpack

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vkflow/vkflow"
	"github.com/vkflow/vkflow/internal/kernels"
	"github.com/vkflow/vkflow/internal/testutil"
	"github.com/vkflow/vkflow/sequence"
	"github.com/vkflow/vkflow/tensor"
	"github.com/vkflow/vkflow/timeline"
)

// aliasOf builds a managed float32 tensor of n elements over the memory at
// p (memory of another managed tensor: a slice of it, as NumPy would
// export one). Its deleter frees only its own struct.
func aliasOf(p unsafe.Pointer, n int64) Managed {
	mt, _ := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{n}, at: p}.build()
	return mt
}

// hostRange formats [p, p+n) as the errors do.
func hostRange(p unsafe.Pointer, n uint64) string {
	a := uint64(uintptr(p))
	return fmt.Sprintf("[%#x, %#x)", a, a+n)
}

// Two zero-copy host imports of overlapping memory would be two VkBuffers,
// which the hazard tracking (keyed by VkBuffer) never orders against each
// other. An import that starts where a live import starts and ends within
// it is a view of that import's VkBuffer; any other overlap is copied, or
// refused under CopyNever naming both ranges; disjoint neighbours are
// separate zero-copy imports.
func TestHostImportAliases(t *testing.T) {
	m, _ := testutil.Manager(t)
	d := m.Runtime()
	align := d.HostImportAlignment()
	require.NotZero(t, align)
	if 64%align != 0 {
		t.Skipf("host import alignment %d: every start below is a multiple of 64 bytes, so that alignment is never the reason to copy", align)
	}
	const (
		total        = 256 // floats in the producer's block
		baseLo, base = 16, 64
	)
	type outcome int
	const (
		view     outcome = iota // zero-copy, the live import's VkBuffer
		separate                // zero-copy, a VkBuffer of its own
		alias                   // copied; refused under CopyNever
	)
	tests := []struct {
		name  string
		lo, n int64 // floats from the block's start
		want  outcome
	}{
		{"the same array twice", baseLo, base, view},
		{"a prefix slice", baseLo, 16, view},
		{"its first element", baseLo, 1, view},
		{"a slice inside, starting later", 32, 16, alias},
		{"a suffix slice", 48, 32, alias},
		{"its last 16 floats", baseLo + base - 16, 16, alias},
		{"partial overlap past its end", 64, 32, alias},
		{"partial overlap before its start", 0, 32, alias},
		{"a range covering it", 0, 128, alias},
		{"the same start, longer", baseLo, base + 16, alias},
		{"the disjoint neighbour after it", baseLo + base, 16, separate},
		{"the disjoint neighbour before it", 0, baseLo, separate},
	}
	allocs := d.MemStats().Allocations
	for _, tt := range tests {
		for _, mode := range []CopyMode{CopyIfNeeded, CopyNever} {
			t.Run(fmt.Sprintf("%s/%s", tt.name, map[CopyMode]string{CopyIfNeeded: "copy if needed", CopyNever: "copy never"}[mode]), func(t *testing.T) {
				vals := make([]float32, total)
				for i := range vals {
					vals[i] = float32(i)
				}
				mt, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{base}, data: f32bytes(vals...)}.build()
				// The base import starts 64 bytes into the block.
				*(*unsafe.Pointer)(mt.ptr) = unsafe.Add(data, 4*baseLo)
				before := foreignDeletes()
				b, copied, err := Import(ctx, m, mt)
				require.NoError(t, err)
				require.False(t, copied)
				require.Equal(t, 1, d.LiveHostImports())

				p := unsafe.Add(data, 4*tt.lo)
				x, copied, err := ImportCopy(ctx, m, aliasOf(p, tt.n), mode)
				if tt.want == alias && mode == CopyNever {
					require.Error(t, err)
					assert.ErrorIs(t, err, vkflow.ErrInvalid)
					assert.ErrorIs(t, err, vkflow.ErrUnsupported, "a refused copy, like every CopyNever refusal (BufferError in Python)")
					var ae *HostAliasError
					require.True(t, errors.As(err, &ae))
					assert.Equal(t, uint64(uintptr(p)), ae.Addr)
					assert.Equal(t, uint64(4*tt.n), ae.Size)
					assert.Equal(t, uint64(uintptr(b.Allocation().Mapped)), ae.LiveAddr)
					assert.Equal(t, uint64(4*base), ae.LiveSize)
					assert.Contains(t, err.Error(), hostRange(p, uint64(4*tt.n)), "names the new range")
					assert.Contains(t, err.Error(), hostRange(b.Allocation().Mapped, 4*base), "names the live import")
					assert.Nil(t, x)
					assert.Equal(t, before+1, foreignDeletes(), "Import calls the deleter on failure")
				} else {
					require.NoError(t, err)
					assert.Equal(t, tt.want == alias, copied, "copied")
					switch tt.want {
					case view:
						assert.Equal(t, b.Allocation().Buffer, x.Allocation().Buffer, "a view of the live import's VkBuffer")
						assert.Equal(t, b.Allocation().Memory(), x.Allocation().Memory())
						assert.Equal(t, p, x.Allocation().Mapped)
						assert.Equal(t, 1, d.LiveHostImports())
					case separate:
						assert.NotEqual(t, b.Allocation().Buffer, x.Allocation().Buffer)
						assert.Equal(t, p, x.Allocation().Mapped)
						assert.Equal(t, 2, d.LiveHostImports())
					case alias:
						assert.NotEqual(t, b.Allocation().Buffer, x.Allocation().Buffer)
						assert.NotEqual(t, p, x.Allocation().Mapped, "a copy")
						assert.Equal(t, 1, d.LiveHostImports())
						assert.Equal(t, before+1, foreignDeletes(), "a copy releases its producer at once")
					}
					got, err := x.Float32s()
					require.NoError(t, err)
					assert.Equal(t, vals[tt.lo:tt.lo+tt.n], got)
					require.NoError(t, x.Close())
				}
				require.NoError(t, b.Close()) // frees the block, after x
				assert.Equal(t, before+2, foreignDeletes(), "each deleter exactly once")
				assert.Zero(t, d.LiveHostImports())
				assert.Equal(t, allocs, d.MemStats().Allocations)
			})
		}
	}
}

// crossAlias writes through one zero-copy import and reads through another
// of the same host memory (the same array imported twice, and a prefix
// slice of it), in one sequence and across submits, both ways, and checks
// the values. It returns what went wrong instead of failing, so that
// TestHostImportSharingOff can show it catches an unguarded alias.
func crossAlias(t *testing.T, m *vkflow.Manager) (problems []string) {
	t.Helper()
	const n, pre = 4096, 1024
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(i)
	}
	mt, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{n}, data: f32bytes(vals...)}.build()
	a, copied, err := Import(ctx, m, mt)
	require.NoError(t, err)
	require.False(t, copied)
	defer a.Close() // last: its deleter frees the block
	b, copied, err := Import(ctx, m, aliasOf(data, n))
	require.NoError(t, err)
	require.False(t, copied)
	defer b.Close()
	p, copied, err := Import(ctx, m, aliasOf(data, pre))
	require.NoError(t, err)
	require.False(t, copied)
	defer p.Close()
	for name, x := range map[string]*tensor.Tensor{"the same array": b, "a prefix slice": p} {
		if x.Allocation().Buffer != a.Allocation().Buffer {
			problems = append(problems, fmt.Sprintf("%s: two VkBuffers (%#x, %#x) over one host range: no barrier orders them", name, uint64(a.Allocation().Buffer), uint64(x.Allocation().Buffer)))
		}
	}

	ones, err := tensor.FromSlice(m, make1(n))
	require.NoError(t, err)
	defer ones.Close()
	host, err := tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Host))
	require.NoError(t, err)
	defer host.Close()
	hostPre, err := tensor.New(m, tensor.Float32, []int{pre}, tensor.In(tensor.Host))
	require.NoError(t, err)
	defer hostPre.Close()
	saxA, err := kernels.Saxpy(m, ones, a) // a += alpha
	require.NoError(t, err)
	defer saxA.Close()

	want := append([]float32(nil), vals...)
	check := func(what string, x *tensor.Tensor, w []float32) {
		got, err := x.Float32s()
		require.NoError(t, err)
		for i := range w {
			if got[i] != w[i] {
				problems = append(problems, fmt.Sprintf("%s: element %d is %v, want %v", what, i, got[i], w[i]))
				return
			}
		}
	}
	add := func(alpha float32) {
		for i := range want {
			want[i] += alpha
		}
	}
	newSeq := func() *sequence.Sequence {
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		return s
	}

	// One sequence: a GPU write through a, then GPU reads through b and p.
	one := newSeq()
	defer one.Close()
	one.Dispatch(saxA, float32(3)).Copy(b, host).Copy(p, hostPre).SyncLocal(host, hostPre)
	// Across submits, submitted back to back: write through a, read
	// through p; then write through the view b, read through a; then read
	// through b and write through a (write after read).
	w1, r1 := newSeq(), newSeq()
	defer w1.Close()
	defer r1.Close()
	w1.Dispatch(saxA, float32(5))
	r1.Copy(p, hostPre).SyncLocal(hostPre)
	w2, r2 := newSeq(), newSeq()
	defer w2.Close()
	defer r2.Close()
	w2.Fill(b, float32(7))
	r2.Copy(a, host).SyncLocal(host)
	r3, w3 := newSeq(), newSeq()
	defer r3.Close()
	defer w3.Close()
	r3.Copy(b, host).SyncLocal(host)
	w3.Fill(a, float32(-1))
	for round := 0; round < 2; round++ {
		require.NoError(t, one.Eval(ctx))
		add(3)
		check(fmt.Sprintf("round %d, one sequence: read through the same array", round), host, want)
		check(fmt.Sprintf("round %d, one sequence: read through the prefix", round), hostPre, want[:pre])

		pw, pr := w1.EvalAsync(), r1.EvalAsync()
		require.NoError(t, pw.Wait(ctx))
		require.NoError(t, pr.Wait(ctx))
		add(5)
		check(fmt.Sprintf("round %d, across submits: read through the prefix", round), hostPre, want[:pre])

		pw, pr = w2.EvalAsync(), r2.EvalAsync()
		require.NoError(t, pw.Wait(ctx))
		require.NoError(t, pr.Wait(ctx))
		for i := range want {
			want[i] = 7
		}
		check(fmt.Sprintf("round %d, across submits: write through the view, read through the original", round), host, want)

		pr, pw = r3.EvalAsync(), w3.EvalAsync()
		require.NoError(t, pr.Wait(ctx))
		require.NoError(t, pw.Wait(ctx))
		check(fmt.Sprintf("round %d, across submits: read before a write through the other", round), host, want)
		for i := range want {
			want[i] = -1
		}
		check(fmt.Sprintf("round %d: the producer's memory", round), a, want)
		copy(want, vals)
		copy(unsafe.Slice((*float32)(data), n), vals)
	}
	return problems
}

func make1(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = 1
	}
	return s
}

// GPU work through aliasing imports is ordered: the barriers inferred for
// one VkBuffer cover both. (Under the test-only vkflow_nobarriers tag, the
// synchronization validation layer reports the hazards of this test: one
// VkBuffer over one VkDeviceMemory, which the layer tracks.)
func TestHostImportAliasOrder(t *testing.T) {
	m, _ := testutil.Manager(t)
	assert.Empty(t, crossAlias(t, m))
	assert.Zero(t, m.Runtime().LiveHostImports())
}

// The mutation check: with the registry switched off, the same array
// imported twice is two VkBuffers again (over two VkDeviceMemory objects,
// which the validation layer tracks apart, so it reports nothing) and
// crossAlias must see it.
func TestHostImportSharingOff(t *testing.T) {
	m, v := testutil.Manager(t)
	v.Expect("SYNC-HAZARD") // counted below, should any appear
	m.Runtime().SetHostImportSharing(false)
	problems := crossAlias(t, m)
	require.NotEmpty(t, problems, "crossAlias must catch two imports of one range that the registry did not join")
	for _, p := range problems {
		t.Logf("caught: %s", p)
	}
	hazards := 0
	for _, msg := range v.Messages() {
		if strings.HasPrefix(msg.ID, "SYNC-HAZARD") {
			hazards++
		}
	}
	t.Logf("SYNC-HAZARD reports with the registry off: %d", hazards)
}

// The producer's deleter runs exactly once for every import, in every order
// of closing the first import and its views, and with Manager.Close: a
// view's once it is done, the first import's once every tensor over the
// memory is done. The registry entry lives as long as the memory, not
// until Close: a tensor closed while GPU work on it is held still serves
// new imports of its range as views.
func TestHostImportAliasLifetimes(t *testing.T) {
	const n = 1024
	orders := [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	open := func(t *testing.T, m *vkflow.Manager) ([]*tensor.Tensor, int64) {
		mt, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{n}, data: f32bytes(make([]float32, n)...)}.build()
		before := foreignDeletes()
		first, _, err := Import(ctx, m, mt)
		require.NoError(t, err)
		same, _, err := Import(ctx, m, aliasOf(data, n))
		require.NoError(t, err)
		prefix, _, err := Import(ctx, m, aliasOf(data, n/4))
		require.NoError(t, err)
		ts := []*tensor.Tensor{first, same, prefix}
		for _, x := range ts[1:] {
			require.Equal(t, first.Allocation().Buffer, x.Allocation().Buffer)
		}
		// GPU work on each, done before the closes.
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		require.NoError(t, s.Fill(first, float32(1)).Fill(same, float32(2)).Fill(prefix, float32(3)).Eval(ctx))
		require.NoError(t, s.Close())
		require.Equal(t, before, foreignDeletes())
		return ts, before
	}
	for _, order := range orders {
		t.Run(fmt.Sprintf("close %v", order), func(t *testing.T) {
			m, _ := testutil.Manager(t)
			d := m.Runtime()
			allocs := d.MemStats().Allocations
			ts, before := open(t, m)
			closed := map[int]bool{}
			for _, i := range order {
				require.NoError(t, ts[i].Close())
				closed[i] = true
				want := before
				for _, v := range []int{1, 2} {
					if closed[v] {
						want++ // a view's deleter: once it is done
					}
				}
				if len(closed) == 3 {
					want++ // the first import's: once all are done
				}
				assert.Equal(t, want, foreignDeletes(), "after closing %d of %v", i, order)
				assert.Equal(t, len(closed) < 3, d.LiveHostImports() == 1)
			}
			for _, x := range ts {
				require.NoError(t, x.Close())
			}
			assert.Equal(t, before+3, foreignDeletes(), "each exactly once")
			assert.Equal(t, allocs, d.MemStats().Allocations)
		})
	}
	t.Run("Manager.Close", func(t *testing.T) {
		m, _ := testutil.Manager(t)
		ts, before := open(t, m)
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		_ = s.Fill(ts[1], float32(4)).EvalAsync() // maybe still running at Close
		require.NoError(t, m.Close())
		assert.Equal(t, before+3, foreignDeletes())
		for _, x := range ts {
			require.NoError(t, x.Close())
		}
		assert.Equal(t, before+3, foreignDeletes())
	})
	t.Run("closed with GPU work held", func(t *testing.T) {
		m, _ := testutil.Manager(t)
		d := m.Runtime()
		mt, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{n}, data: f32bytes(make([]float32, n)...)}.build()
		before := foreignDeletes()
		first, _, err := Import(ctx, m, mt)
		require.NoError(t, err)
		buf := first.Allocation().Buffer
		tl, err := timeline.New(m, 0)
		require.NoError(t, err)
		defer tl.Close()
		s, err := sequence.New(m, 0)
		require.NoError(t, err)
		pend := s.Fill(first, float32(6)).Submit(ctx, sequence.Wait(tl, 1)) // held: nobody signalled 1
		require.NoError(t, s.Close())
		require.NoError(t, first.Close())
		assert.Equal(t, before, foreignDeletes(), "the held submit still uses the memory")
		assert.Equal(t, 1, d.LiveHostImports(), "the entry lives as long as the memory")

		again, copied, err := ImportCopy(ctx, m, aliasOf(data, n), CopyNever)
		require.NoError(t, err)
		assert.False(t, copied)
		assert.Equal(t, buf, again.Allocation().Buffer, "a view of the closed tensor's live import")

		require.NoError(t, tl.Signal(1))
		require.NoError(t, pend.Wait(ctx))
		got, err := again.Float32s()
		require.NoError(t, err)
		assert.Equal(t, float32(6), got[n-1], "the held fill ran, and shows through the view")
		require.NoError(t, again.Close())
		assert.Equal(t, before+2, foreignDeletes())
		assert.Zero(t, d.LiveHostImports())
	})
}

// Two zero-copy host imports over one host range as separate buffers (what
// Import made before the registry, and still makes with it off) are one
// memory to vkCmdCopyBuffer, though each has a VkDeviceMemory of its own:
// Copy rejects regions that overlap through them, and accepts disjoint
// ones.
func TestCopyOverlapHostImports(t *testing.T) {
	m, _ := testutil.Manager(t)
	m.Runtime().SetHostImportSharing(false)
	vals := make([]float32, 48)
	for i := range vals {
		vals[i] = float32(i)
	}
	mt1, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{32}, data: f32bytes(vals...)}.build()
	a, copied, err := Import(ctx, m, mt1)
	require.NoError(t, err)
	defer a.Close()
	require.False(t, copied)
	// b is the 32 floats from float 16 of the same memory (64 bytes in,
	// which meets the import alignment).
	b, copied, err := Import(ctx, m, aliasOf(unsafe.Add(data, 64), 32))
	require.NoError(t, err)
	defer b.Close()
	require.False(t, copied)

	s, err := sequence.New(m, 0)
	require.NoError(t, err)
	defer s.Close()
	err = s.Copy(a, b).Eval(ctx)
	require.ErrorIs(t, err, vkflow.ErrInvalid, "a's floats 16-31 are b's 0-15")
	assert.Contains(t, err.Error(), "region 0's destination overlaps region 0's source")

	require.NoError(t, s.Clear())
	require.NoError(t, s.Copy(a, b, sequence.Region{Src: 0, Dst: 16, Len: 16}).SyncLocal(b).Eval(ctx))
	got := unsafe.Slice((*float32)(data), 48)
	for i := range 48 {
		want := float32(i)
		if i >= 32 {
			want = float32(i - 32)
		}
		assert.Equal(t, want, got[i], "float %d", i)
	}
}

// A vkflow tensor exported to the host and imported back is the same
// memory: vkflow's own export comes back as a view of the tensor's
// VkBuffer (as a kDLVulkan export does); the same memory handed back by
// another framework (its own managed tensor over our mapped memory) is
// copied, or refused under CopyNever naming both ranges.
func TestImportOwnHostMemory(t *testing.T) {
	m, _ := testutil.Manager(t)
	d := m.Runtime()
	const n = 256
	for _, mem := range []tensor.Memory{tensor.Device, tensor.Host} {
		t.Run(mem.String(), func(t *testing.T) {
			src, err := tensor.New(m, tensor.Float32, []int{n}, tensor.In(mem))
			require.NoError(t, err)
			defer src.Close()
			if !src.Mapped() {
				t.Skipf("%v memory is not mapped here", mem)
			}
			for _, v := range []*Version{nil, {1, 3}} {
				live := Live()
				mt, err := Export(ctx, src, Options{MaxVersion: v})
				require.NoError(t, err)
				require.Equal(t, CPU, mt.Describe().Device.Type)
				back, copied, err := ImportCopy(ctx, m, mt, CopyNever)
				require.NoError(t, err)
				assert.False(t, copied)
				assert.Equal(t, src.Allocation().Buffer, back.Allocation().Buffer, "a view of the tensor's buffer")
				assert.Equal(t, src.Allocation().Mapped, back.Allocation().Mapped)
				assert.Zero(t, d.LiveHostImports())

				// GPU write through the view, GPU read through the tensor.
				host, err := tensor.New(m, tensor.Float32, []int{n}, tensor.In(tensor.Host))
				require.NoError(t, err)
				w, err := sequence.New(m, 0)
				require.NoError(t, err)
				r, err := sequence.New(m, 0)
				require.NoError(t, err)
				w.Fill(back, float32(8))
				r.Copy(src, host).SyncLocal(host)
				pw, pr := w.EvalAsync(), r.EvalAsync()
				require.NoError(t, pw.Wait(ctx))
				require.NoError(t, pr.Wait(ctx))
				got, err := host.Float32s()
				require.NoError(t, err)
				assert.Equal(t, float32(8), got[n-1])
				for _, x := range []interface{ Close() error }{w, r, host} {
					require.NoError(t, x.Close())
				}
				// The view holds the export, which holds the tensor.
				require.Equal(t, live+1, Live())
				require.NoError(t, back.Close())
				assert.Equal(t, live, Live(), "the view's close ran the export's deleter")
			}

			// Another framework's managed tensor over the same memory.
			p := src.Allocation().Mapped
			x, copied, err := Import(ctx, m, aliasOf(p, n))
			require.NoError(t, err)
			assert.True(t, copied, "a copy, not a second buffer over vkflow's memory")
			assert.NotEqual(t, p, x.Allocation().Mapped)
			require.NoError(t, x.Close())
			before := foreignDeletes()
			_, _, err = ImportCopy(ctx, m, aliasOf(unsafe.Add(p, 64), 16), CopyNever)
			assert.ErrorIs(t, err, vkflow.ErrInvalid)
			var ae *HostAliasError
			require.True(t, errors.As(err, &ae))
			assert.True(t, ae.Own)
			assert.Contains(t, err.Error(), hostRange(unsafe.Add(p, 64), 64))
			assert.Contains(t, err.Error(), fmt.Sprintf("[%#x, %#x)", ae.LiveAddr, ae.LiveAddr+ae.LiveSize), "names vkflow's block")
			assert.Equal(t, before+1, foreignDeletes())
		})
	}
}

// Imports of one array from several goroutines at once make one import at
// a time: with a live import they are all views of it; without one, each
// either makes the import or joins the one another goroutine made, and no
// second import over the range is ever live. Every deleter runs once.
func TestHostImportAliasConcurrent(t *testing.T) {
	m, _ := testutil.Manager(t)
	d := m.Runtime()
	const n, workers, rounds = 1024, 4, 40
	mt, data := foreign{dev: Device{CPU, 0}, dt: DataType{codeFloat, 32, 1}, ndim: 1, shape: []int64{n}, data: f32bytes(make([]float32, n)...)}.build()
	allocs := d.MemStats().Allocations
	run := func(t *testing.T, sizes func(i int) int64, check func(x *tensor.Tensor) error) {
		before := foreignDeletes()
		var wg sync.WaitGroup
		errs := make(chan error, workers*rounds)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range rounds {
					x, copied, err := ImportCopy(ctx, m, aliasOf(data, sizes(i)), CopyNever)
					if err != nil {
						errs <- err
						continue
					}
					if copied {
						errs <- errors.New("copied")
					}
					if err := check(x); err != nil {
						errs <- err
					}
					if live := d.LiveHostImports(); live > 1 {
						errs <- fmt.Errorf("%d live imports of one range", live)
					}
					x.Close()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		assert.Equal(t, before+workers*rounds, foreignDeletes())
	}
	t.Run("views of a live import", func(t *testing.T) {
		first, _, err := Import(ctx, m, aliasOf(data, n))
		require.NoError(t, err)
		buf := first.Allocation().Buffer
		run(t, func(i int) int64 { return n >> (i % 4) }, func(x *tensor.Tensor) error {
			if x.Allocation().Buffer != buf {
				return errors.New("not a view of the live import")
			}
			return nil
		})
		before := foreignDeletes()
		require.NoError(t, first.Close())
		assert.Equal(t, before+1, foreignDeletes())
	})
	t.Run("no import live at first", func(t *testing.T) {
		run(t, func(int) int64 { return n }, func(*tensor.Tensor) error { return nil })
	})
	assert.Zero(t, d.LiveHostImports())
	assert.Equal(t, allocs, d.MemStats().Allocations)
	mt.Delete() // the block's producer: after every import of it
}
