"""The PEP 517 build backend of the vkflow Python package (in-tree, named by
python/pyproject.toml through ``backend-path``).

It needs nothing from a package index: ``requires = []`` and the standard
library only. ``build_wheel`` builds libvkflow.so with Go from the repository
this directory belongs to::

    go build -trimpath -buildmode=c-shared -o <tmp>/libvkflow.so ./capi

run from the repository root (the parent of python/) with CGO_ENABLED=1; the
``GO`` environment variable names the go command (default: ``go`` on PATH,
then /usr/local/go/bin/go). The wheel is written by hand: vkflow/*.py,
vkflow/libvkflow.so and the .dist-info (METADATA, WHEEL, RECORD with sha256
hashes), tagged py3-none-<platform> because the package is pure Python over
ctypes but carries a native library.

``build_sdist`` writes a source archive that builds on its own: the Python
files plus the Go module (its non-test sources, headers and SPIR-V) under
``go/``. ``build_editable`` builds libvkflow.so into python/vkflow (as
``make python`` does) and installs a .pth file that puts python/ on sys.path.
"""

import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

# python/, the directory holding pyproject.toml (pip runs the backend there).
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GO_MODULE = "github.com/vkflow/vkflow"
LIBRARY = "libvkflow.so"

# What an sdist takes from the Go module: every file with these endings
# outside the skipped directories, test files excluded, and license files
# (the vendored Vulkan headers').
_SDIST_ENDINGS = (".go", ".c", ".h", ".s", ".spv", ".comp")
_SDIST_SKIP_DIRS = {".git", "build", "python", "bench", "examples", "docs", "tools",
                    "testdata", ".gl"}


class BuildError(RuntimeError):
    """A build step failed; the message says which and why."""


# --- project metadata ---------------------------------------------------------

def _project():
    """Returns the [project] table of pyproject.toml (name, version, ...)."""
    path = os.path.join(HERE, "pyproject.toml")
    with open(path, "rb") as f:
        data = f.read()
    try:
        import tomllib
    except ImportError:  # Python < 3.11: the few keys we use, by pattern.
        text = data.decode("utf-8")
        section = text.split("[project]", 1)[1].split("\n[", 1)[0]
        project = dict(re.findall(r'^(\w[\w-]*)\s*=\s*"([^"]*)"', section, re.M))
    else:
        project = tomllib.loads(data.decode("utf-8"))["project"]
    for key in ("name", "version"):
        if not project.get(key):
            raise BuildError("vkflow build: pyproject.toml has no project.%s" % key)
    return project


def _dist_name(project):
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        "Name: %s" % project["name"],
        "Version: %s" % project["version"],
    ]
    if project.get("description"):
        lines.append("Summary: %s" % project["description"])
    if project.get("requires-python"):
        lines.append("Requires-Python: %s" % project["requires-python"])
    for extra, reqs in sorted((project.get("optional-dependencies") or {}).items()):
        lines.append("Provides-Extra: %s" % extra)
        for req in reqs:
            lines.append('Requires-Dist: %s; extra == "%s"' % (req, extra))
    return ("\n".join(lines) + "\n").encode("utf-8")


def _tag():
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "py3-none-%s" % plat


def _wheel_file(tag):
    return ("Wheel-Version: 1.0\nGenerator: vkflow_build\nRoot-Is-Purelib: false\n"
            "Tag: %s\n" % tag).encode("utf-8")


# --- Go -------------------------------------------------------------------------

def _go():
    """The go command: $GO, then go on PATH, then /usr/local/go/bin/go."""
    env = os.environ.get("GO")
    if env:
        found = shutil.which(env)
        if not found:
            raise BuildError("vkflow build: GO=%r is not an executable" % env)
        return found
    found = shutil.which("go") or (
        "/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else None)
    if not found:
        raise BuildError(
            "vkflow build: the go command was not found. Building the vkflow wheel compiles "
            "libvkflow.so with Go (cgo): install Go (see the repository README, `make deps`) "
            "and put it on PATH, or set GO=/path/to/go")
    return found


def _module_root():
    """The Go module to build: the parent of python/ in a checkout, or go/
    inside an unpacked sdist."""
    for root in (os.path.dirname(HERE), os.path.join(HERE, "go")):
        gomod = os.path.join(root, "go.mod")
        if os.path.isfile(gomod) and os.path.isdir(os.path.join(root, "capi")):
            with open(gomod, encoding="utf-8") as f:
                if re.search(r"^module\s+%s\s*$" % re.escape(GO_MODULE), f.read(), re.M):
                    return root
    raise BuildError("vkflow build: no Go module %s found beside %s (build from a checkout of "
                     "the repository, or from its sdist)" % (GO_MODULE, HERE))


def _build_library(dest_dir):
    """Builds libvkflow.so into dest_dir and returns its path."""
    go = _go()
    root = _module_root()
    out = os.path.join(dest_dir, LIBRARY)
    env = dict(os.environ, CGO_ENABLED="1")
    cmd = [go, "build", "-trimpath", "-buildmode=c-shared", "-o", out, "./capi"]
    sys.stderr.write("vkflow build: %s (in %s)\n" % (" ".join(cmd), root))
    try:
        proc = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
    except OSError as e:
        raise BuildError("vkflow build: cannot run %s: %s" % (go, e)) from e
    if proc.returncode != 0:
        raise BuildError("vkflow build: `%s` failed (exit %d):\n%s"
                         % (" ".join(cmd), proc.returncode,
                            proc.stdout.decode("utf-8", "replace")))
    return out


# --- archives -------------------------------------------------------------------

def _epoch():
    """SOURCE_DATE_EPOCH, or 1980-01-01 (the earliest time a zip can hold)."""
    return max(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")), 315532800)


def _date_time():
    return time.gmtime(_epoch())[:6]


def _record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _write_wheel(wheel_directory, project, files):
    """Writes a wheel holding files, a list of (archive name, bytes, mode),
    plus its .dist-info; returns the wheel's file name."""
    name, version = _dist_name(project), project["version"]
    tag = _tag()
    dist_info = "%s-%s.dist-info" % (name, version)
    files = list(files) + [
        (dist_info + "/METADATA", _metadata(project), 0o644),
        (dist_info + "/WHEEL", _wheel_file(tag), 0o644),
    ]
    record = io.StringIO()
    for arcname, data, _ in files:
        record.write("%s,%s,%d\n" % (arcname, _record_hash(data), len(data)))
    record.write("%s/RECORD,,\n" % dist_info)
    files.append((dist_info + "/RECORD", record.getvalue().encode("utf-8"), 0o644))

    filename = "%s-%s-%s.whl" % (name, version, tag)
    path = os.path.join(wheel_directory, filename)
    when = _date_time()
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data, mode in files:
            info = zipfile.ZipInfo(arcname, when)
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    os.replace(path + ".part", path)
    return filename


def _package_sources():
    """(archive name, bytes, mode) for every vkflow/*.py."""
    pkg = os.path.join(HERE, "vkflow")
    out = []
    for fname in sorted(os.listdir(pkg)):
        if fname.endswith(".py"):
            with open(os.path.join(pkg, fname), "rb") as f:
                out.append(("vkflow/" + fname, f.read(), 0o644))
    if not out:
        raise BuildError("vkflow build: no Python files in %s" % pkg)
    return out


# --- PEP 517 hooks ----------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    project = _project()
    dist_info = "%s-%s.dist-info" % (_dist_name(project), project["version"])
    target = os.path.join(metadata_directory, dist_info)
    os.makedirs(target, exist_ok=True)
    with open(os.path.join(target, "METADATA"), "wb") as f:
        f.write(_metadata(project))
    with open(os.path.join(target, "WHEEL"), "wb") as f:
        f.write(_wheel_file(_tag()))
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    files = _package_sources()
    with tempfile.TemporaryDirectory(prefix="vkflow-build-") as tmp:
        with open(_build_library(tmp), "rb") as f:
            files.append(("vkflow/" + LIBRARY, f.read(), 0o755))
    return _write_wheel(wheel_directory, project, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    project = _project()
    pkg = os.path.join(HERE, "vkflow")
    with tempfile.TemporaryDirectory(prefix="vkflow-build-") as tmp:
        shutil.copyfile(_build_library(tmp), os.path.join(pkg, LIBRARY))
    pth = (HERE + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, project,
                        [("__editable__.%s.pth" % _dist_name(project), pth, 0o644)])


def _sdist_members():
    """(archive name under the sdist root, path on disk) for the sdist."""
    out = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
           ("_build/vkflow_build.py", os.path.abspath(__file__))]
    out += [(arc, os.path.join(HERE, arc)) for arc, _, _ in _package_sources()]
    root = _module_root()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        dirnames[:] = sorted(d for d in dirnames
                             if not (rel == "." and d in _SDIST_SKIP_DIRS)
                             and d not in (".git", "testdata", "__pycache__"))
        for fname in sorted(filenames):
            keep = (rel == "." and fname in ("go.mod", "go.sum")) or fname.startswith("LICENSE") \
                or (fname.endswith(_SDIST_ENDINGS) and not fname.endswith("_test.go"))
            if keep:
                arc = os.path.normpath(os.path.join("go", rel, fname))
                out.append((arc, os.path.join(dirpath, fname)))
    return out


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = "%s-%s" % (_dist_name(project), project["version"])
    filename = base + ".tar.gz"
    path = os.path.join(sdist_directory, filename)
    mtime = _epoch()

    def add(tf, arcname, data, mode=0o644):
        info = tarfile.TarInfo(base + "/" + arcname)
        info.size = len(data)
        info.mode = mode
        info.mtime = mtime
        tf.addfile(info, io.BytesIO(data))

    with tarfile.open(path + ".part", "w:gz", format=tarfile.PAX_FORMAT) as tf:
        add(tf, "PKG-INFO", _metadata(project))
        for arcname, src in _sdist_members():
            with open(src, "rb") as f:
                add(tf, arcname, f.read())
    os.replace(path + ".part", path)
    return filename
