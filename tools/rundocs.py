#!/usr/bin/env python3
"""Runs the fenced code blocks of the documentation (make doctest).

Every fenced block of README.md, docs/*.md and examples/*/README.md is
either run or carries a marker with its reason:

  python  run in one process per document, cumulatively: the blocks share
          their globals in document order. A block of ">>>" lines is a
          doctest: its shown output is compared (ELLIPSIS and whitespace
          normalized).
  go      compiled and run. A block that is a whole program (package main)
          runs as it is; a fragment becomes the body of a function, after the
          document's Go setup, with its imports found from the packages it
          names and a check of err after each statement that assigns it.
  c       compiled against capi/vkflow.h and libvkflow.so and run: a fragment
          becomes the body of main, after the document's C setup, with the
          return code of each vkflow call checked.
  text    output shown: not run.

A line "// Output: TEXT" (Go, C) or "# Output: TEXT" (Python) in a block
asks that the block print TEXT.

Markers are HTML comments, invisible on the rendered page:

  <!-- doctest: skip REASON -->        on the line before a block: not run
  <!-- doctest: toplevel -->           before a C block: at file scope
  <!-- doctest: setup LANG
  code
  -->                                  run before each later LANG block of
                                       the document (Go, C), or once (Python)

Blocks run with VKFLOW_VALIDATION=1: a validation-layer message (with
synchronization validation) fails them. It prints "N blocks run, M skipped
(reasons)" and fails on the first block that does not compile, fails, draws
a validation message, or does not print what the document shows.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNNABLE = ("python", "go", "c")
GO_PACKAGES = {
    "context": "context", "errors": "errors", "fmt": "fmt", "log": "log", "math": "math",
    "os": "os", "strings": "strings", "time": "time",
    "vkflow": "github.com/vkflow/vkflow", "algorithm": "github.com/vkflow/vkflow/algorithm",
    "cuda": "github.com/vkflow/vkflow/cuda", "dlpack": "github.com/vkflow/vkflow/dlpack",
    "graph": "github.com/vkflow/vkflow/graph", "interop": "github.com/vkflow/vkflow/interop",
    "ops": "github.com/vkflow/vkflow/ops", "linalg": "github.com/vkflow/vkflow/ops/linalg",
    "fft": "github.com/vkflow/vkflow/ops/fft", "render": "github.com/vkflow/vkflow/ops/render",
    "sequence": "github.com/vkflow/vkflow/sequence",
    "tensor": "github.com/vkflow/vkflow/tensor", "timeline": "github.com/vkflow/vkflow/timeline",
    "shaders": "github.com/vkflow/vkflow/shaders",
}


class Block:
    def __init__(self, doc, line, lang, code, skip=None, toplevel=False, setup=""):
        self.doc, self.line, self.lang, self.code = doc, line, lang, code
        self.skip, self.toplevel, self.setup = skip, toplevel, setup

    @property
    def where(self):
        return "%s:%d" % (os.path.relpath(self.doc, ROOT), self.line)

    def outputs(self, comment):
        return [m.group(1).strip() for m in re.finditer(re.escape(comment) + r" Output: (.*)$",
                                                        self.code, re.M)]


class DocError(Exception):
    pass


def parse(path):
    """The blocks of the markdown file path, with their markers and setups."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, setups = [], {}
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"<!-- doctest: setup (\w+)\s*$", line)
        if m:
            j = i + 1
            while j < len(lines) and lines[j].strip() != "-->":
                j += 1
            if j == len(lines):
                raise DocError("%s:%d: unterminated doctest setup" % (path, i + 1))
            setups[m.group(1)] = "\n".join(lines[i + 1:j])
            if m.group(1) == "python":
                blocks.append(Block(path, i + 1, "python-setup", setups["python"]))
            i = j + 1
            continue
        m = re.match(r"^```(\S*)\s*$", line)
        if not m:
            i += 1
            continue
        lang = m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        if j == len(lines):
            raise DocError("%s:%d: unterminated code block" % (path, i + 1))
        prev = lines[i - 1] if i > 0 else ""
        skip = re.match(r"<!-- doctest: skip (.+?) -->\s*$", prev)
        b = Block(path, i + 1, lang, "\n".join(lines[i + 1:j]),
                  skip=skip.group(1) if skip else None,
                  toplevel=prev.strip() == "<!-- doctest: toplevel -->",
                  setup=setups.get(lang, ""))
        if lang not in RUNNABLE + ("text",) and not b.skip:
            raise DocError("%s: a ```%s block is neither run nor marked: label it python, go, c "
                           "or text, or add <!-- doctest: skip REASON --> before it"
                           % (b.where, lang or " (no language)"))
        blocks.append(b)
        i = j + 1
    return blocks


def run(cmd, what, timeout=300, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode != 0:
        raise DocError("%s:\n%s%s" % (what, p.stdout[-4000:], p.stderr[-4000:]))
    return p.stdout


def check_outputs(b, comment, got):
    for want in b.outputs(comment):
        if want not in got:
            raise DocError("%s: the document shows %r, the block printed:\n%s" % (b.where, want, got))


def check_validation(where, stderr):
    """Blocks run with VKFLOW_VALIDATION=1 (the validation layer with
    synchronization validation): a warning or error it logged fails them."""
    for line in stderr.splitlines():
        if re.search(r"(WARN|ERROR)\b.*vulkan: ", line):
            raise DocError("%s: a validation message:\n%s" % (where, line))


# Go


def go_checked(code):
    """code with check(err) after each top-level statement that assigns err."""
    out, depth, stmt_assigns = [], 0, False
    for line in code.split("\n"):
        out.append(line)
        bare = re.sub(r'"(\\.|[^"\\])*"|`[^`]*`|//.*$', "", line)
        if depth == 0 and re.search(r"\berr\s*:?=", bare):
            stmt_assigns = True
        depth += bare.count("(") + bare.count("{") - bare.count(")") - bare.count("}")
        if depth == 0 and stmt_assigns:
            out.append("check(err)")
            stmt_assigns = False
    return "\n".join(out)


def go_program(blocks):
    """One program running each fragment in its own function, in order."""
    funcs, used = [], set()
    for k, b in enumerate(blocks):
        body = b.setup + "\n" + b.code
        used |= set(re.findall(r"\b([a-z]+)\.[A-Za-z_]", re.sub(r"//.*", "", body)))
        funcs.append("func block%d() {\n%s{ // fragment\n%s\n} // fragment\n}\n" % (
            k, (b.setup + "\n") if b.setup else "", go_checked(b.code)))
    imports = sorted(GO_PACKAGES[p] for p in used if p in GO_PACKAGES)
    for p in ("fmt", "os"):
        if p not in imports:
            imports.append(p)
    calls = "".join('\tfmt.Println("=== doctest %d")\n\trunBlock(%d, block%d)\n' % (k, k, k)
                    for k in range(len(blocks)))
    return ("package main\n\nimport (\n%s)\n\n%s\n" % ("".join('\t"%s"\n' % i for i in sorted(set(imports))),
                                                       "\n".join(funcs)) +
            "func check(err error) {\n\tif err != nil {\n\t\tpanic(err)\n\t}\n}\n\n"
            "func runBlock(k int, f func()) {\n\tdefer func() {\n\t\tif r := recover(); r != nil {\n"
            '\t\t\tfmt.Fprintf(os.Stderr, "doctest block %d: %v\\n", k, r)\n\t\t\tos.Exit(1)\n'
            "\t\t}\n\t}()\n\tf()\n}\n\nfunc main() {\n" + calls + "}\n")


def go_build(src, work, go):
    """Builds src, adding `_ = name` for variables declared and not used
    (a fragment shows a call; it need not use what it returns)."""
    path = os.path.join(work, "main.go")
    for _ in range(64):
        open(path, "w").write(src)
        p = subprocess.run([go, "build", "-o", os.path.join(work, "prog"), "."], cwd=work,
                           capture_output=True, text=True, timeout=600)
        if p.returncode == 0:
            return src
        lines = src.split("\n")
        fixes = []
        for m in re.finditer(r"main\.go:(\d+):\d+: declared and not used: (\w+)", p.stderr):
            fixes.append((int(m.group(1)), m.group(2)))
        for m in re.finditer(r'main\.go:\d+:\d+: "([^"]+)" imported and not used', p.stderr):
            lines = [l for l in lines if l.strip() != '"%s"' % m.group(1)]
        if not fixes and len(lines) == len(src.split("\n")):
            raise DocError("the Go blocks do not compile:\n" + p.stderr[-4000:])
        for ln, name in sorted(fixes, reverse=True):
            # Use it where it is in scope: before the fragment's block for
            # a setup variable, at the end of the fragment for its own.
            end = ln - 1
            while lines[end] not in ("{ // fragment", "} // fragment"):
                end += 1
            lines.insert(end, "_ = %s" % name)
        src = "\n".join(lines)
    raise DocError("the Go blocks do not compile")


def run_go(blocks, go, work):
    frags = [b for b in blocks if "package main" not in b.code]
    progs = [b for b in blocks if "package main" in b.code]
    env = dict(os.environ, VKFLOW_VALIDATION="1")
    for b in progs:
        d = tempfile.mkdtemp(dir=work)
        open(os.path.join(d, "main.go"), "w").write(b.code)
        p = subprocess.run([go, "run", "."], cwd=d, env=env, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise DocError("%s: the program fails:\n%s%s" % (b.where, p.stdout[-4000:], p.stderr[-4000:]))
        check_validation(b.where, p.stderr)
        check_outputs(b, "//", p.stdout)
    if frags:
        d = tempfile.mkdtemp(dir=work)
        go_build(go_program(frags), d, go)
        p = subprocess.run([os.path.join(d, "prog")], capture_output=True, text=True, timeout=600, env=env)
        parts = re.split(r"^=== doctest (\d+)\n", p.stdout, flags=re.M)
        printed = {int(parts[k]): parts[k + 1] for k in range(1, len(parts) - 1, 2)}
        if p.returncode != 0:
            m = re.search(r"doctest block (\d+): (.*)", p.stderr)
            where = frags[int(m.group(1))].where if m else "the Go blocks"
            raise DocError("%s: fails: %s" % (where, p.stderr[-4000:]))
        check_validation("the Go blocks (%s ...)" % frags[0].where, p.stderr)
        for k, b in enumerate(frags):
            check_outputs(b, "//", printed.get(k, ""))


# C


def c_int_functions():
    h = open(os.path.join(ROOT, "capi", "vkflow.h")).read()
    return set(re.findall(r"^int (vkflow_\w+)\(", h, re.M))


def c_checked(code, ints):
    out = []
    for line in code.split("\n"):
        m = re.match(r"^(\s*)((vkflow_\w+)\(.*\));(.*)$", line)
        d = re.match(r"^\s*int (\w+) = (vkflow_\w+)\(.*;", line)
        if m and m.group(3) in ints:
            out.append("%sDOCTEST_CHECK(%s);%s" % (m.group(1), m.group(2), m.group(4)))
        else:
            out.append(line)
            if d and d.group(2) in ints:
                out.append("DOCTEST_CHECK(%s);" % d.group(1))
    return "\n".join(out)


C_HEAD = """#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vkflow.h"

#define DOCTEST_CHECK(e) do { int rc_ = (e); if (rc_ != 0) { char msg_[512]; \\
	vkflow_last_error(msg_, sizeof msg_); fprintf(stderr, "line %d: %s: rc %d: %s\\n", __LINE__, #e, rc_, msg_); \\
	exit(1); } } while (0)
"""


def run_c(blocks, libdir, work, cc):
    ints = c_int_functions()
    for b in blocks:
        if b.toplevel:
            src = "#include <stdint.h>\n" + b.code + "\nint main(void) { return 0; }\n"
        else:
            src = C_HEAD + "\nint main(void) {\n%s\n%s\nreturn 0;\n}\n" % (
                c_checked(b.setup, ints), c_checked(b.code, ints))
        d = tempfile.mkdtemp(dir=work)
        open(os.path.join(d, "main.c"), "w").write(src)
        run([cc, "-std=c11", "-Wall", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
             "-I", os.path.join(ROOT, "capi"), "-I", os.path.join(ROOT, "dlpack"),
             os.path.join(d, "main.c"), "-o", os.path.join(d, "prog"), "-L", libdir, "-lvkflow",
             "-Wl,-rpath," + libdir], "%s: does not compile" % b.where)
        p = subprocess.run([os.path.join(d, "prog")], capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, VKFLOW_VALIDATION="1"))
        if p.returncode != 0:
            raise DocError("%s: fails:\n%s%s" % (b.where, p.stdout[-4000:], p.stderr[-4000:]))
        check_validation(b.where, p.stderr)
        check_outputs(b, "//", p.stdout)


# Python


def run_python(doc, blocks, python):
    units = [{"where": b.where, "code": b.code, "file": b.doc, "line": b.line,
              "outputs": b.outputs("#")} for b in blocks]
    runner = os.path.join(ROOT, "tools", "rundocs_py.py")
    p = subprocess.run([python, runner], input=json.dumps(units), capture_output=True, text=True,
                       timeout=900, cwd=tempfile.gettempdir(), env=dict(os.environ, VKFLOW_VALIDATION="1"))
    if p.returncode != 0:
        raise DocError("%s: the Python blocks:\n%s%s" % (os.path.relpath(doc, ROOT),
                                                          p.stdout[-6000:], p.stderr[-6000:]))


def run_file(f, args, work):
    """Runs f's blocks; returns (blocks run, skipped, shown output)."""
    blocks = parse(os.path.abspath(f))
    skipped = ["%s (%s)" % (b.where, b.skip) for b in blocks if b.skip]
    shown = sum(1 for b in blocks if b.lang == "text" and not b.skip)
    live = [b for b in blocks if not b.skip]
    py = [b for b in live if b.lang in ("python", "python-setup")]
    if any(b.lang == "python" for b in py):
        run_python(f, py, args.python)
    gob = [b for b in live if b.lang == "go"]
    if gob:
        run_go(gob, args.go, work)
    cb = [b for b in live if b.lang == "c"]
    if cb:
        run_c(cb, os.path.abspath(args.libdir), work, args.cc)
    return sum(1 for b in live if b.lang in RUNNABLE), skipped, shown


def self_test(args, work):
    """The mutation check: each document of tools/testdata/rundocs holds a
    broken block and names, in an "expect" comment, the failure it must
    give."""
    fixtures = sorted(glob.glob(os.path.join(ROOT, "tools", "testdata", "rundocs", "*.md")))
    for f in fixtures:
        want = re.search(r"<!-- expect: (.+?) -->", open(f).read()).group(1)
        try:
            run_file(f, args, work)
        except DocError as e:
            if want not in str(e):
                print("rundocs: self-test: %s failed, but not with %r:\n%s" % (f, want, e), file=sys.stderr)
                return 1
            continue
        print("rundocs: self-test: %s ran clean: a broken block went unnoticed" % f, file=sys.stderr)
        return 1
    print("rundocs: self-test: %d broken documents, each caught" % len(fixtures))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--go", default=os.environ.get("GO", "go"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--libdir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--self-test", action="store_true", help="check that broken blocks fail")
    args = ap.parse_args()
    if os.sep in args.python:
        args.python = os.path.abspath(args.python)
    files = args.files or ([os.path.join(ROOT, "README.md")] +
                           sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))) +
                           sorted(glob.glob(os.path.join(ROOT, "examples", "*", "README.md"))))
    os.makedirs(os.path.join(ROOT, "build"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="_doctest.", dir=os.path.join(ROOT, "build"))
    try:
        if args.self_test:
            return self_test(args, work)
        ran, skipped, shown = 0, [], 0
        for f in files:
            r, s, n = run_file(f, args, work)
            ran, shown = ran + r, shown + n
            skipped += s
    except DocError as e:
        print("doctest: FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        subprocess.run(["rm", "-rf", work])
    print("doctest: %d blocks run, %d skipped%s%s" % (
        ran, len(skipped), (" (" + "; ".join(skipped) + ")") if skipped else "",
        (", %d of shown output" % shown) if shown else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
