package glsl

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeModule is n bytes that pass validModule (n a multiple of 4, >= 20),
// tagged with tag.
func fakeModule(n int, tag byte) []byte {
	code := bytes.Repeat([]byte{tag}, n)
	binary.LittleEndian.PutUint32(code, spirvMagic)
	return code
}

// fakeKey is a cache key (SHA-256 in hex) made from name.
func fakeKey(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

// memKeys returns the keys in memory, most recently used first.
func memKeys() []string {
	mem.Lock()
	defer mem.Unlock()
	var keys []string
	for e := mem.lru.Front(); e != nil; e = e.Next() {
		keys = append(keys, e.Value.(*module).key)
	}
	return keys
}

func TestMemoryLRU(t *testing.T) {
	// A step calls cached(key): a "key:size" step compiles a module of
	// size bytes when key is not in memory; a "key" step expects a hit.
	tests := []struct {
		name      string
		limit     int64
		steps     []string
		keys      []string // in memory after the steps, most recent first
		compiles  int      // calls of the compile function
		evictions int64
	}{
		{"within the bound", 100, []string{"a:40", "b:40", "a", "b"}, []string{"b", "a"}, 2, 0},
		{"exact fit", 100, []string{"a:60", "b:40"}, []string{"b", "a"}, 2, 0},
		{"least recently used out first", 100, []string{"a:40", "b:40", "c:40"}, []string{"c", "b"}, 3, 1},
		{"a hit refreshes", 100, []string{"a:40", "b:40", "a", "c:40"}, []string{"c", "a"}, 3, 1},
		{"several out for one", 100, []string{"a:30", "b:30", "c:30", "d:90"}, []string{"d"}, 4, 3},
		{"an evicted module compiles again", 100, []string{"a:60", "b:60", "a:60"}, []string{"a"}, 3, 2},
		{"larger than the bound: not kept", 100, []string{"a:40", "big:120", "big:120"}, []string{"a"}, 3, 0},
		{"off", 0, []string{"a:4", "a:4", "b:4"}, nil, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolate(t)
			setLimits(t, tt.limit, -1)
			before := Stats()
			compiled := 0
			for i, step := range tt.steps {
				key, size, miss := strings.Cut(step, ":")
				var n int
				if miss {
					_, err := fmt.Sscan(size, &n)
					require.NoError(t, err)
				}
				code, err := cached(key, func() ([]byte, error) {
					require.True(t, miss, "step %d (%s): compiled, want a hit", i, step)
					compiled++
					return make([]byte, n), nil
				})
				require.NoError(t, err)
				if miss {
					assert.Len(t, code, n)
				}
				mem.Lock()
				assert.LessOrEqual(t, mem.bytes, tt.limit, "step %d", i)
				mem.Unlock()
			}
			assert.Equal(t, tt.keys, memKeys())
			assert.Equal(t, tt.compiles, compiled)
			after := Stats()
			assert.Equal(t, tt.evictions, after.MemoryEvictions-before.MemoryEvictions, "evictions")
			assert.Equal(t, int64(len(tt.steps)-tt.compiles), after.MemoryHits-before.MemoryHits, "hits")
			assert.Equal(t, int64(tt.compiles), after.MemoryMisses-before.MemoryMisses, "misses")
			assert.Equal(t, len(tt.keys), after.MemoryModules)
		})
	}
}

func TestMemoryLowerBound(t *testing.T) {
	isolate(t)
	setLimits(t, 100, -1)
	for _, k := range []string{"a", "b", "c"} {
		_, err := cached(k, func() ([]byte, error) { return make([]byte, 30), nil })
		require.NoError(t, err)
	}
	before := Stats()
	SetCacheLimits(60, -1)
	assert.Equal(t, []string{"c", "b"}, memKeys(), "lowering the bound evicts at once")
	after := Stats()
	assert.Equal(t, int64(1), after.MemoryEvictions-before.MemoryEvictions)
	assert.Equal(t, int64(60), after.MemoryBytes)
	m, d := CacheLimits()
	assert.Equal(t, int64(60), m)
	assert.Equal(t, int64(DefaultCacheDisk), d, "a negative bound is left unchanged")
	SetCacheLimits(0, -1)
	assert.Empty(t, memKeys())
}

// diskModules returns the module files in dir by name, and their total size.
func diskModules(t *testing.T, dir string) (map[string]bool, int64) {
	t.Helper()
	files, total := scanCache(dir)
	names := map[string]bool{}
	for _, f := range files {
		names[strings.TrimSuffix(f.name, ".spv")] = true
	}
	return names, total
}

// age sets the file of key to the modification time base+i seconds.
func age(t *testing.T, dir, key string, base time.Time, i int) {
	t.Helper()
	at := base.Add(time.Duration(i) * time.Second)
	require.NoError(t, os.Chtimes(cachePath(dir, key), at, at))
}

func TestDiskBound(t *testing.T) {
	const size = 100
	old := time.Now().Add(-time.Hour)
	tests := []struct {
		name  string
		limit int64
		// run writes (and reads) modules; it returns the keys that must
		// be on disk afterwards and those that must not.
		run       func(t *testing.T, dir string) (kept, gone []string)
		evictions int64
	}{
		{"many writes, small bound", 10 * size, func(t *testing.T, dir string) (kept, gone []string) {
			var keys []string
			for i := range 50 {
				k := fakeKey(fmt.Sprint(i))
				writeCache(dir, k, fakeModule(size, byte(i)))
				age(t, dir, k, old, i)
				keys = append(keys, k)
				_, total := diskModules(t, dir)
				require.LessOrEqual(t, total, int64(10*size), "after write %d", i)
			}
			// Writes 10, 13, ..., 49 cross the bound (1000 bytes) and go
			// down to 7/8 of it: 3 files out each time, 8 files left.
			return keys[42:], keys[:42]
		}, 42},
		{"a hit refreshes", 4 * size, func(t *testing.T, dir string) (kept, gone []string) {
			keys := []string{fakeKey("a"), fakeKey("b"), fakeKey("c"), fakeKey("d")}
			for i, k := range keys {
				writeCache(dir, k, fakeModule(size, 1))
				age(t, dir, k, old, i)
			}
			before := Stats()
			require.Equal(t, fakeModule(size, 1), readCache(dir, keys[0]), "a hit")
			fi, err := os.Stat(cachePath(dir, keys[0]))
			require.NoError(t, err)
			assert.WithinDuration(t, time.Now(), fi.ModTime(), time.Minute, "touched")
			assert.Equal(t, int64(1), Stats().DiskHits-before.DiskHits)
			e := fakeKey("e")
			writeCache(dir, e, fakeModule(size, 2)) // over the bound: b and c go (down to 7/8)
			return []string{keys[0], keys[3], e}, keys[1:3]
		}, 2},
		{"a recent hit is not touched", 4 * size, func(t *testing.T, dir string) (kept, gone []string) {
			k := fakeKey("a")
			writeCache(dir, k, fakeModule(size, 1))
			recent := time.Now().Add(-time.Second).Truncate(time.Second)
			require.NoError(t, os.Chtimes(cachePath(dir, k), recent, recent))
			require.NotNil(t, readCache(dir, k))
			fi, err := os.Stat(cachePath(dir, k))
			require.NoError(t, err)
			assert.Equal(t, recent, fi.ModTime(), "within touchAfter: no system call")
			return []string{k}, nil
		}, 0},
		{"temporary and other files are left alone", 2 * size, func(t *testing.T, dir string) (kept, gone []string) {
			others := map[string]int{
				fakeKey("being written") + ".123456" + tmpSuffix: 10 * size, // a writer's temporary file
				"notes.txt":                    10 * size,
				"README.spv":                   10 * size,
				fakeKey("upper")[:60] + ".spv": 10 * size, // not a key
			}
			for name, n := range others {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o644))
				require.NoError(t, os.Chtimes(filepath.Join(dir, name), old, old))
			}
			var keys []string
			for i := range 5 {
				k := fakeKey(fmt.Sprint(i))
				writeCache(dir, k, fakeModule(size, 1))
				age(t, dir, k, old, 100+i)
				keys = append(keys, k)
			}
			for name := range others {
				_, err := os.Stat(filepath.Join(dir, name))
				assert.NoError(t, err, "%s is still there", name)
			}
			// Writes 2 and 4 cross the bound (200 bytes), each deleting
			// two files to get to 7/8 of it: the others do not count.
			return keys[4:], keys[:4]
		}, 4},
		{"larger than the bound: not written", 2 * size, func(t *testing.T, dir string) (kept, gone []string) {
			k, big := fakeKey("a"), fakeKey("big")
			writeCache(dir, k, fakeModule(size, 1))
			writeCache(dir, big, fakeModule(3*size, 1))
			assert.Nil(t, readCache(dir, big))
			return []string{k}, []string{big}
		}, 0},
		{"a file larger than the bound is not read", 2 * size, func(t *testing.T, dir string) (kept, gone []string) {
			k := fakeKey("a")
			require.NoError(t, os.WriteFile(cachePath(dir, k), fakeModule(3*size, 1), 0o644))
			before := Stats()
			assert.Nil(t, readCache(dir, k))
			assert.Equal(t, int64(1), Stats().DiskMisses-before.DiskMisses)
			require.NoError(t, os.Remove(cachePath(dir, k)))
			return nil, nil
		}, 0},
		{"a vanished file", 4 * size, func(t *testing.T, dir string) (kept, gone []string) {
			keys := []string{fakeKey("a"), fakeKey("b"), fakeKey("c"), fakeKey("d")}
			for i, k := range keys {
				writeCache(dir, k, fakeModule(size, 1))
				age(t, dir, k, old, i)
			}
			// Another process evicts a, the oldest, after this one listed
			// the folder: evict counts it gone, and deletes b next.
			files, total := scanCache(dir)
			require.NoError(t, os.Remove(cachePath(dir, keys[0])))
			before := Stats()
			total = evict(dir, files, total+size, 3*size, "")
			assert.Equal(t, int64(3*size), total)
			assert.Equal(t, int64(1), Stats().DiskEvictions-before.DiskEvictions, "only b was this process's")
			// A read of a vanished file is a miss, not an error.
			assert.Nil(t, readCache(dir, keys[1]))
			// The estimate still counts them: the next write that crosses
			// it lists the folder again and finds room.
			e := fakeKey("e")
			writeCache(dir, e, fakeModule(size, 1))
			disk.Lock()
			assert.Equal(t, int64(3*size), disk.bytes, "listed again")
			disk.Unlock()
			return []string{keys[2], keys[3], e}, keys[:2]
		}, 1},
		{"a lower bound applies at the next write", 10 * size, func(t *testing.T, dir string) (kept, gone []string) {
			var keys []string
			for i := range 6 {
				k := fakeKey(fmt.Sprint(i))
				writeCache(dir, k, fakeModule(size, 1))
				age(t, dir, k, old, i)
				keys = append(keys, k)
			}
			SetCacheLimits(-1, 4*size)
			_, total := diskModules(t, dir)
			assert.Equal(t, int64(6*size), total, "nothing deleted yet")
			k := fakeKey("new")
			writeCache(dir, k, fakeModule(size, 1))
			return []string{keys[4], keys[5], k}, keys[:4]
		}, 4},
		{"off", 0, func(t *testing.T, dir string) (kept, gone []string) {
			k := fakeKey("a")
			writeCache(dir, k, fakeModule(size, 1)) // not reached through Compile, but bounded too
			return nil, []string{k}
		}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			setLimits(t, -1, tt.limit)
			before := Stats()
			kept, gone := tt.run(t, dir)
			names, total := diskModules(t, dir)
			_, limit := CacheLimits()
			assert.LessOrEqual(t, total, limit)
			for _, k := range kept {
				assert.True(t, names[k], "%s… kept", k[:8])
			}
			for _, k := range gone {
				assert.False(t, names[k], "%s… gone", k[:8])
			}
			assert.Equal(t, tt.evictions, Stats().DiskEvictions-before.DiskEvictions, "evictions")
			tmp, _ := filepath.Glob(filepath.Join(dir, "*"+tmpSuffix))
			for _, f := range tmp {
				assert.Contains(t, f, fakeKey("being written"), "no temporary file of ours left")
			}
		})
	}
}

// TestDiskBoundConcurrent writes from several goroutines (as several
// processes would) while others read: the folder stays within the bound
// once the writers are done, and every read is a whole module or a miss.
func TestDiskBoundConcurrent(t *testing.T) {
	const size, limit = 64, 16 * 64
	dir := isolate(t)
	setLimits(t, -1, limit)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 40 {
				k := fakeKey(fmt.Sprint(w, i))
				writeCache(dir, k, fakeModule(size, byte(w)))
				if code := readCache(dir, fakeKey(fmt.Sprint((w+1)%4, i))); code != nil {
					assert.Equal(t, fakeModule(size, byte((w+1)%4)), code)
				}
			}
		})
	}
	wg.Wait()
	_, total := diskModules(t, dir)
	assert.LessOrEqual(t, total, int64(limit))
}

// TestCacheLevelsOff compiles with each level turned off in turn.
func TestCacheLevelsOff(t *testing.T) {
	tests := []struct {
		name              string
		memBytes, disk    int64
		compiles          int64 // of three Compile calls, the second after the memory was emptied
		files             int
		memHits, diskHits int64
	}{
		{"both on", DefaultCacheMemory, DefaultCacheDisk, 1, 1, 1, 1},
		{"memory off", 0, DefaultCacheDisk, 1, 1, 0, 2},
		{"disk off", DefaultCacheMemory, 0, 2, 0, 1, 0},
		{"both off", 0, 0, 3, 0, 0, 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := isolate(t)
			setLimits(t, tt.memBytes, tt.disk)
			src := fmt.Sprintf("%s// levels %d\n", scaleSrc, i)
			before, stats0 := compiles.Load(), Stats()
			var first []byte
			for call := range 3 {
				if call == 1 {
					isolateMemory()
				}
				code, err := Compile(src, Define("N", "4"), Define("OFFSET", "1.0"))
				require.NoError(t, err)
				if first == nil {
					first = code
				}
				assert.Equal(t, first, code)
			}
			assert.Equal(t, tt.compiles, compiles.Load()-before, "compiles")
			names, _ := diskModules(t, dir)
			assert.Len(t, names, tt.files)
			s := Stats()
			assert.Equal(t, tt.memHits, s.MemoryHits-stats0.MemoryHits, "memory hits")
			assert.Equal(t, tt.diskHits, s.DiskHits-stats0.DiskHits, "disk hits")
		})
	}
}

// logTo sends log/slog's default logger, at Debug, to a buffer for the test.
func logTo(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	return &buf
}

func TestCacheLimitsEnv(t *testing.T) {
	const def = 1234
	tests := []struct {
		name, value string
		set         bool
		want        int64
		logged      bool
	}{
		{"unset", "", false, def, false},
		{"empty", "", true, def, false},
		{"zero: off", "0", true, 0, false},
		{"bytes", "1048576", true, 1 << 20, false},
		{"negative", "-1", true, def, true},
		{"a unit", "64MiB", true, def, true},
		{"exponent", "1e6", true, def, true},
		{"spaces", " 5", true, def, true},
		{"overflow", "99999999999999999999", true, def, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := logTo(t)
			if tt.set {
				t.Setenv(envMaxMem, tt.value)
			} else {
				t.Setenv(envMaxMem, "x") // restored after the test
				require.NoError(t, os.Unsetenv(envMaxMem))
			}
			assert.Equal(t, tt.want, envLimit(envMaxMem, def))
			if tt.logged {
				assert.Contains(t, buf.String(), "level=DEBUG")
				assert.Contains(t, buf.String(), envMaxMem)
			} else {
				assert.Empty(t, buf.String())
			}
		})
	}

	t.Run("loaded", func(t *testing.T) {
		setLimits(t, -1, -1) // restores the bounds after loadLimits
		t.Setenv(envMaxMem, "4096")
		t.Setenv(envMaxDisk, "bad")
		loadLimits()
		m, d := CacheLimits()
		assert.Equal(t, int64(4096), m)
		assert.Equal(t, int64(DefaultCacheDisk), d)
		t.Setenv(envMaxDisk, "0")
		loadLimits()
		_, d = CacheLimits()
		assert.Equal(t, int64(0), d)
	})
}

// TestMemoryConcurrent hammers the memory cache from several goroutines
// with a bound smaller than the modules in use, changed meanwhile (run
// with -race).
func TestMemoryConcurrent(t *testing.T) {
	isolate(t)
	setLimits(t, 10*32, -1)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			for i := range 200 {
				k := fmt.Sprint((w * i) % 23)
				code, err := cached(k, func() ([]byte, error) { return []byte(k + strings.Repeat(".", 32-len(k))), nil })
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, k, strings.TrimRight(string(code), "."))
				if i%50 == 0 {
					SetCacheLimits(int64(5+i%3)*32, -1)
				}
			}
		})
	}
	wg.Wait()
	s := Stats()
	m, _ := CacheLimits()
	assert.LessOrEqual(t, s.MemoryBytes, m)
	assert.Equal(t, len(memKeys()), s.MemoryModules)
}
