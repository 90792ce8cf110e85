package glsl

import (
	"encoding/binary"
	"log/slog"
	"os"
	"path/filepath"
)

// spirvMagic is the first word of every SPIR-V module.
const spirvMagic = 0x07230203

// CacheDir is the on-disk cache folder: $VKFLOW_SPIRV_CACHE if set (the value
// "off" disables the disk cache: CacheDir returns ""), else
// os.UserCacheDir()/vkflow/spirv, or "" when there is no user cache folder.
// A folder that cannot be created or written is skipped silently (a Debug
// message in log/slog's default logger): modules are then cached in memory
// only.
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
func readCache(dir, key string) []byte {
	if dir == "" {
		return nil
	}
	code, err := os.ReadFile(cachePath(dir, key))
	if err != nil {
		if !os.IsNotExist(err) {
			slog.Debug("glsl: cache read failed", "err", err)
		}
		return nil
	}
	if !validModule(code) {
		slog.Debug("glsl: ignoring a corrupt cache file", "path", cachePath(dir, key), "bytes", len(code))
		return nil
	}
	return code
}

// writeCache stores code under key: written to a temporary file in dir and
// renamed, so readers see the whole file or none. Failures only log.
func writeCache(dir, key string, code []byte) {
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		slog.Debug("glsl: no disk cache", "dir", dir, "err", err)
		return
	}
	f, err := os.CreateTemp(dir, key+".*.tmp")
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
	}
}
