package glsl

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// spirvMagic is the first word of every SPIR-V module.
const spirvMagic = 0x07230203

// CacheDir is the on-disk cache folder: $VKFLOW_SPIRV_CACHE if set (the value
// "off" disables the disk cache: CacheDir returns ""), else
// os.UserCacheDir()/vkflow/spirv, or "" when there is no user cache folder.
// A folder that cannot be created or written is skipped silently (a Debug
// message in log/slog's default logger): modules are then cached in memory
// only. Its size is bounded: see SetCacheLimits and the package
// documentation.
func CacheDir() string {
	if dir, ok := os.LookupEnv("VKFLOW_SPIRV_CACHE"); ok && dir != "" {
		if dir == "off" {
			return ""
		}
		return dir
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "vkflow", "spirv")
}

func cachePath(dir, key string) string { return filepath.Join(dir, key+".spv") }

// validModule is a cheap check of a cached file: whole words, a full
// header, the SPIR-V magic number.
func validModule(code []byte) bool {
	return len(code) >= 20 && len(code)%4 == 0 && binary.LittleEndian.Uint32(code) == spirvMagic
}

// readCache returns the module under key, or nil when there is none or the
// file is not a plausible module (it is then rewritten after the compile).
// A hit makes the file the most recently used: its modification time is
// set to now, unless it is already within touchAfter of now.
func readCache(dir, key string) []byte {
	if dir == "" {
		return nil
	}
	path := cachePath(dir, key)
	code, mtime, err := readModule(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			slog.Debug("glsl: cache read failed", "err", err)
		}
		stats.diskMisses.Add(1)
		return nil
	}
	if !validModule(code) {
		slog.Debug("glsl: ignoring a corrupt cache file", "path", path, "bytes", len(code))
		stats.diskMisses.Add(1)
		return nil
	}
	stats.diskHits.Add(1)
	if now := time.Now(); now.Sub(mtime) > touchAfter {
		// Fails for a file just evicted or owned by another user: it then
		// only ages.
		_ = os.Chtimes(path, now, now)
	}
	return code
}

// touchAfter is how old a file's modification time must be for a hit to
// refresh it: one system call per hit at most, none for a file in use.
const touchAfter = time.Minute

// readModule reads the file at path and returns its modification time. A
// file larger than the disk bound is not a module this package wrote.
func readModule(path string) ([]byte, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > diskLimit.Load() {
		return nil, fi.ModTime(), nil // not valid: ignored, then replaced
	}
	// Writers replace files by renames, never in place: the size holds.
	code := make([]byte, fi.Size())
	if _, err := io.ReadFull(f, code); err != nil {
		return nil, time.Time{}, err
	}
	return code, fi.ModTime(), nil
}

// writeCache stores code under key: written to a temporary file in dir and
// renamed, so readers see the whole file or none; then it keeps the folder
// within the disk bound (boundDisk). A module larger than the bound is not
// written. Failures only log.
func writeCache(dir, key string, code []byte) {
	if dir == "" {
		return
	}
	if int64(len(code)) > diskLimit.Load() {
		slog.Debug("glsl: module larger than the disk cache bound, not written", "bytes", len(code), "bound", diskLimit.Load())
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		slog.Debug("glsl: no disk cache", "dir", dir, "err", err)
		return
	}
	// Temporary names end in tmpSuffix: eviction never counts or deletes them.
	f, err := os.CreateTemp(dir, key+".*"+tmpSuffix)
	if err != nil {
		slog.Debug("glsl: no disk cache", "dir", dir, "err", err)
		return
	}
	_, err = f.Write(code)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), cachePath(dir, key))
	}
	if err != nil {
		slog.Debug("glsl: cache write failed", "dir", dir, "err", err)
		_ = os.Remove(f.Name())
		return
	}
	boundDisk(dir, key, int64(len(code)))
}

const tmpSuffix = ".tmp"

// diskRescan is how long this process trusts its estimate of a folder's
// size (other processes write to it too).
const diskRescan = time.Minute

// disk is this process's estimate of the disk cache's size.
var disk struct {
	sync.Mutex
	dir   string    // the folder it describes
	bytes int64     // its modules' size at the last scan, plus what this process wrote since
	at    time.Time // the last scan
	fresh bool      // dir, bytes and at hold (false: scan at the next write)
}

// boundDisk counts a module of n bytes just written to dir under key, and
// keeps dir within the disk bound: when the estimate is over the bound (or
// stale: another folder, a new bound, older than diskRescan), it lists the
// folder, and if the modules there exceed the bound it deletes the least
// recently used (oldest modification time) down to 7/8 of the bound, so
// that the next writes need no listing. The module just written stays.
// Only module files count: temporary files, being written, are skipped,
// and files that vanish meanwhile (another process evicted them) are fine.
func boundDisk(dir, key string, n int64) {
	disk.Lock()
	defer disk.Unlock()
	limit := diskLimit.Load()
	if disk.fresh && disk.dir == dir && time.Since(disk.at) < diskRescan {
		disk.bytes += n
		if disk.bytes <= limit {
			return
		}
	}
	files, total := scanCache(dir)
	if total > limit {
		total = evict(dir, files, total, limit-limit/8, key+".spv")
	}
	disk.dir, disk.bytes, disk.at, disk.fresh = dir, total, time.Now(), true
}

type cacheFile struct {
	name  string
	size  int64
	mtime time.Time
}

// scanCache lists the module files in dir and their total size.
func scanCache(dir string) ([]cacheFile, int64) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		slog.Debug("glsl: cannot list the disk cache", "dir", dir, "err", err)
		return nil, 0
	}
	var files []cacheFile
	var total int64
	for _, e := range entries {
		if !moduleFile(e.Name()) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // vanished: evicted by another process
		}
		files = append(files, cacheFile{e.Name(), fi.Size(), fi.ModTime()})
		total += fi.Size()
	}
	return files, total
}

// moduleFile reports whether name is a module file's: a SHA-256 key in hex
// and ".spv" (temporary files end in tmpSuffix; other files are not ours).
func moduleFile(name string) bool {
	key, ok := strings.CutSuffix(name, ".spv")
	if !ok || len(key) != 2*sha256.Size {
		return false
	}
	for _, c := range key {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// evict deletes the least recently used files, but keep, until total is
// at most target, and returns the new total.
func evict(dir string, files []cacheFile, total, target int64, keep string) int64 {
	slices.SortFunc(files, func(a, b cacheFile) int {
		if c := a.mtime.Compare(b.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	for _, f := range files {
		if total <= target {
			break
		}
		if f.name == keep {
			continue
		}
		switch err := os.Remove(filepath.Join(dir, f.name)); {
		case err == nil:
			stats.diskEvictions.Add(1)
			total -= f.size
		case errors.Is(err, fs.ErrNotExist):
			total -= f.size // another process evicted it
		default:
			slog.Debug("glsl: cache eviction failed", "dir", dir, "err", err)
		}
	}
	return total
}
