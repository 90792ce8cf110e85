"""The package's shape (docs/PYTHON.md, "Package layout"): vkflow's modules
import each other without cycles, no submodule imports from the package
``__init__``, no module is over 500 lines, ``__init__.py`` only imports and
re-exports, and ``vkflow.array_api`` is an attribute after ``import vkflow``.

The checks read the sources of the vkflow that ``import vkflow`` finds (the
installed copy under ``make test-python``) with ``ast``; nothing is executed
but the one subprocess that imports vkflow afresh.
"""

import ast
import glob
import importlib.util
import os
import subprocess
import sys
import unittest

# The package is found, not imported: the checks hold (and report) even when
# an import cycle keeps vkflow from importing.
PKG_DIR = os.path.dirname(os.path.abspath(importlib.util.find_spec("vkflow").origin))
MAX_LINES = 500
INIT_MAX_CODE_LINES = 100  # __init__.py outside its docstring


def modules():
    """{module name: source path} for vkflow/*.py ("__init__" is the package)."""
    return {os.path.basename(p)[:-3]: p for p in glob.glob(os.path.join(PKG_DIR, "*.py"))}


def imports_of(name, path, known):
    """The vkflow modules that module name imports, anywhere in it (at module
    level and inside functions): {target: first line}. "__init__" stands for
    the package itself (``from . import X`` where X is no module)."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    out = {}

    def add(target, line):
        out.setdefault(target, line)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = node.module
            elif node.level == 0 and node.module and (node.module == "vkflow"
                                                      or node.module.startswith("vkflow.")):
                base = node.module[len("vkflow."):] if "." in node.module else None
            else:
                continue
            if base:
                add(base.split(".")[0], node.lineno)
            else:  # from . import a, b: modules, or names of the package
                for alias in node.names:
                    add(alias.name if alias.name in known else "__init__", node.lineno)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("vkflow."):
                    add(alias.name.split(".")[1], node.lineno)
                elif alias.name == "vkflow":
                    add("__init__", node.lineno)
    out.pop(name, None)
    return out


def import_graph():
    mods = modules()
    return {name: imports_of(name, path, mods) for name, path in mods.items()}


def find_cycle(graph):
    """A list of modules [a, b, ..., a] forming a cycle, or None."""
    state = {}  # 1: on the stack, 2: done
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


class TestLayout(unittest.TestCase):

    def test_graph_sees_imports(self):
        """The import graph finds what the modules import (the checks below
        would pass vacuously on an empty graph)."""
        graph = import_graph()
        self.assertIn("_lib", graph["__init__"])
        self.assertTrue(any(graph[m] for m in graph if m != "__init__"))
        self.assertEqual(find_cycle({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}),
                         ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b": 1}, "b": {}, "c": {"a": 1}}))

    def test_no_import_cycles(self):
        graph = import_graph()
        cycle = find_cycle(graph)
        if cycle:
            steps = ["%s.py:%d imports %s" % (a, graph[a][b], b) for a, b in zip(cycle, cycle[1:])]
            self.fail("import cycle %s\n  %s" % (" -> ".join(cycle), "\n  ".join(steps)))

    def test_no_submodule_imports_the_package(self):
        graph = import_graph()
        bad = ["%s.py:%d" % (m, deps["__init__"]) for m, deps in sorted(graph.items())
               if m != "__init__" and "__init__" in deps]
        self.assertEqual(bad, [], "these import names from vkflow/__init__.py; import them "
                         "from the module that defines them")

    def test_no_imports_inside_functions(self):
        """Modules import each other at the top: an import inside a function
        (to dodge a cycle) hides a dependency."""
        late = []
        for name, path in sorted(modules().items()):
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            top = set(id(n) for n in tree.body)
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and id(node) not in top and (
                        node.level or (node.module or "").split(".")[0] == "vkflow"):
                    late.append("%s.py:%d" % (name, node.lineno))
        self.assertEqual(late, [], "vkflow imports inside functions or blocks")

    def test_file_sizes(self):
        long = {}
        for name, path in modules().items():
            with open(path, encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                long[name + ".py"] = n
        self.assertEqual(long, {}, "modules over %d lines" % MAX_LINES)

    def test_init_only_reexports(self):
        path = os.path.join(PKG_DIR, "__init__.py")
        with open(path, encoding="utf-8") as f:
            source = f.read()
        tree = ast.parse(source, path)
        defs = ["%s %s (line %d)" % (type(n).__name__, n.name, n.lineno) for n in ast.walk(tree)
                if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
        self.assertEqual(defs, [], "__init__.py defines code; move it to a module")
        body = tree.body
        doc_end = body[0].end_lineno if body and isinstance(body[0], ast.Expr) and \
            isinstance(getattr(body[0], "value", None), ast.Constant) else 0
        code = [line for line in source.splitlines()[doc_end:]
                if line.strip() and not line.lstrip().startswith("#")]
        self.assertLessEqual(len(code), INIT_MAX_CODE_LINES,
                             "__init__.py has %d lines of code outside its docstring"
                             % len(code))

    def test_array_api_is_an_attribute(self):
        """``import vkflow`` alone makes vkflow.array_api available (a fresh
        interpreter: other tests import vkflow.array_api themselves)."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.dirname(PKG_DIR)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
                                          if p])
        code = ("import sys, vkflow; print(vkflow.array_api.__array_api_version__); "
                "print(vkflow.ops.__name__, 'vkflow.array_api' in sys.modules)")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.split(), ["2025.12", "vkflow.ops", "True"])


if __name__ == "__main__":
    unittest.main()
