"""A seeded randomized differential test: a long random program of Python
operators run on vkflow tensors and on NumPy arrays side by side.

Each step draws an operator (binary with a tensor, a NumPy array or a Python
scalar on either side, reflected, in place, unary, ``@``, ``reshape``,
``T``) and operands of one dtype (float32, int32 or bool) from a pool of
earlier results, applies the same Python expression to both sides and
compares: dtype and shape equal, values bit-exact for integers and bools,
within test_ops' tolerances for floats (TOL: a few ULPs for + - * and
comparisons, "approx" for / and **). Results join the pool with vkflow's
values on both sides (so float errors do not accumulate), unless they are
not finite or grow past a bound. Python scalars are NumPy 0-d arrays of the
tensor's dtype on the NumPy side, so NumPy 1.x's value-based casting
does not change the reference's dtype.

The seed is in the failure message; a failing step names the expression.
"""

import operator
import os
import unittest
import warnings

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

from test_arraylike import LATE_OPS, ArrayTest, needs_ops  # noqa: E402
from test_ops import host  # noqa: E402

STEPS = 400
SHAPES = [(3, 4), (4,), (3, 1), (1, 4), (), (2, 3, 4)]
BOUND = {"float32": 1e4, "int32": 1e6, "bool": 2}

ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
           "==": operator.eq, "!=": operator.ne}
LATE_INT = {"//": operator.floordiv, "%": operator.mod, "&": operator.and_,
            "|": operator.or_, "^": operator.xor}
LATE_BOOL = {"&": operator.and_, "|": operator.or_, "^": operator.xor}
SHIFT = {"<<": operator.lshift, ">>": operator.rshift}
INPLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul,
           "/": operator.itruediv, "//": operator.ifloordiv, "%": operator.imod,
           "&": operator.iand, "|": operator.ior, "^": operator.ixor,
           "<<": operator.ilshift, ">>": operator.irshift, "**": operator.ipow}


class Program:
    """The pool of (tensor, array) pairs and the operators each dtype takes."""

    def __init__(self, test, seed, late):
        self.test, self.rng, self.late = test, np.random.default_rng(seed), late
        self.pool = {dt: [self.fresh(dt) for _ in range(6)] for dt in BOUND}
        self.binary = {
            "float32": dict(ARITH, **COMPARE),
            "int32": dict(ARITH, **COMPARE, **(LATE_INT if late else {})),
            "bool": dict(COMPARE, **{"+": operator.add, "*": operator.mul},
                         **(LATE_BOOL if late else {})),
        }
        self.ran = set()

    def data(self, dtype, shape, lo=-4, hi=4):
        r = self.rng
        if dtype == "bool":
            return np.asarray(r.integers(0, 2, size=shape).astype(bool))
        if dtype == "float32":
            return np.asarray(r.integers(lo * 8, hi * 8 + 1, size=shape) / 8, dtype=np.float32)
        return np.asarray(r.integers(lo * 2, hi * 2 + 1, size=shape), dtype=np.int32)

    def fresh(self, dtype, shape=None, **kw):
        if shape is None:
            shape = SHAPES[self.rng.integers(len(SHAPES))]
        a = self.data(dtype, shape, **kw)
        return self.test.vk(a), a

    def pick(self, dtype, like=None, into=False):
        """A pool entry; with like (a shape), one that broadcasts with it
        (into: to exactly like), or None when there is none."""
        def fits(shape):
            try:
                b = np.broadcast_shapes(shape, like)
            except ValueError:
                return False
            return b == like or not into
        cands = [p for p in self.pool[dtype] if like is None or fits(p[1].shape)]
        return cands[self.rng.integers(len(cands))] if cands else None

    def scalar(self, dtype):
        if dtype == "bool":
            return bool(self.rng.integers(2))
        if dtype == "float32":
            return float(self.rng.integers(-32, 33) / 8)
        return int(self.rng.integers(-9, 10))

    def keep(self, t, want):
        """Adds the result to its pool (vkflow's values on both sides)."""
        if t.dtype not in self.pool:
            return
        got = host(t)
        if not np.all(np.isfinite(got.astype(np.float64))) or (
                got.size and np.max(np.abs(got.astype(np.float64))) > BOUND[t.dtype]):
            return
        pool = self.pool[t.dtype]
        if len(pool) >= 12:
            pool.pop(self.rng.integers(len(pool)))
        pool.append((t, np.asarray(got)))

    def check(self, label, got, want, kind):
        self.ran.add(label.split(" ")[0])
        want = np.asarray(want)
        self.test.check(got, want, kind)
        self.keep(got, want)

    # --- the steps ---------------------------------------------------------------

    def step(self):
        r = self.rng
        dtype = ("float32", "int32", "bool")[r.integers(3)]
        kind = r.integers(10)
        if kind < 4:
            return self.binary_step(dtype)
        if kind < 6:
            return self.inplace_step(dtype)
        if kind == 6:
            return self.unary_step(dtype)
        if kind == 7:
            return self.special_step(dtype if dtype != "bool" else "int32")
        if kind == 8:
            return self.matmul_step(dtype if dtype != "bool" else "float32")
        return self.layout_step(dtype)

    def binary_step(self, dtype):
        r = self.rng
        sym = sorted(self.binary[dtype])[r.integers(len(self.binary[dtype]))]
        op = self.binary[dtype][sym]
        xt, xa = self.pick(dtype)
        side = r.integers(4)  # tensor op tensor, op NumPy, op scalar, scalar op
        y = self.pick(dtype, like=xa.shape)
        if side < 2 and y is not None:
            yt, ya = y
            y = yt if side == 0 else ya
            got, want = op(xt, y), op(xa, ya)
            label = "%s tensor %s" % (sym, "tensor" if side == 0 else "ndarray")
            if side == 1 and r.integers(2):                    # NumPy on the left
                got, want, label = op(ya, xt), op(ya, xa), label + " reflected"
        else:
            s = self.scalar(dtype)
            s0 = np.asarray(s, dtype=dtype)
            if side == 2:
                got, want, label = op(xt, s), op(xa, s0), "%s tensor scalar" % sym
            else:
                got, want, label = op(s, xt), op(s0, xa), "%s scalar tensor" % sym
        with np.errstate(all="ignore"):
            want = np.asarray(want)
        self.check(label, got, want, "approx" if sym == "/" else "exact")

    def inplace_step(self, dtype):
        r = self.rng
        syms = [s for s in self.binary[dtype] if s in INPLACE]
        if dtype == "int32":
            syms.remove("/")                                   # float64 into int32: TypeError
        sym = syms[r.integers(len(syms))]
        xt, xa = self.pick(dtype)
        y = self.pick(dtype, like=xa.shape, into=True)
        if y is None or r.integers(3) == 0:
            y = (self.scalar(dtype),) * 2
            y = (y[0], np.asarray(y[1], dtype=dtype))
        yt, ya = y
        t, a = +xt, xa.copy()                                  # +x: a copy
        before = t.handle
        with np.errstate(all="ignore"):
            INPLACE[sym](a, ya)
        res = INPLACE[sym](t, yt if r.integers(2) else ya)
        self.test.assertIs(res, t)
        self.test.assertEqual(t.handle, before)
        self.check("%s= in place" % sym, t, a, "approx" if sym == "/" else "exact")

    def unary_step(self, dtype):
        r = self.rng
        ops = {"+": (operator.pos, lambda a: a.copy()), "abs": (abs, np.abs)}
        if dtype != "bool":
            ops["-"] = (operator.neg, operator.neg)
        if self.late and dtype != "float32":
            ops["~"] = (operator.invert, operator.invert)
        sym = sorted(ops)[r.integers(len(ops))]
        xt, xa = self.pick(dtype)
        self.check("unary%s" % sym, ops[sym][0](xt), np.asarray(ops[sym][1](xa)), "exact")

    def special_step(self, dtype):
        """** on fresh operands (positive float bases, small int exponents),
        and shifts by 0..7."""
        r = self.rng
        xt, xa = self.pick(dtype)
        if self.late and dtype == "int32" and r.integers(2):
            sym = sorted(SHIFT)[r.integers(2)]
            st, sa = self.fresh(dtype, xa.shape[-1:] if xa.ndim else (), lo=0, hi=3)
            if r.integers(2):
                got, want = SHIFT[sym](xt, st), SHIFT[sym](xa, sa)
            else:
                got, want = SHIFT[sym](xt, int(sa.flat[0]) if sa.size else 1), \
                    SHIFT[sym](xa, np.int32(sa.flat[0] if sa.size else 1))
            return self.check(sym, got, want, "exact")
        if dtype == "float32":
            bt, ba = abs(xt) + 0.5, np.abs(xa) + np.float32(0.5)
            et, ea = self.fresh(dtype, xa.shape, lo=-2, hi=2)
        else:
            bt, ba = self.fresh(dtype, xa.shape, lo=-3, hi=3)
            et, ea = self.fresh(dtype, xa.shape, lo=0, hi=2)
        if r.integers(2):
            got, want = bt ** et, ba ** ea
        else:
            s = int(r.integers(0, 4))
            got, want = bt ** s, ba ** np.asarray(s, dtype=dtype)
        self.check("**", got, np.asarray(want), "approx")

    def matmul_step(self, dtype):
        r = self.rng
        n, k, m = (int(v) for v in r.integers(1, 6, size=3))
        at, aa = self.fresh(dtype, (n, k))
        bt, ba = self.fresh(dtype, (k, m) if r.integers(3) else (k,))
        got = at @ (bt if r.integers(2) else ba)
        self.check("@", got, aa @ ba, "exact")

    def layout_step(self, dtype):
        xt, xa = self.pick(dtype)
        if xa.ndim <= 2 and self.rng.integers(2):
            return self.check("T", xt.T, xa.T, "exact")
        shape = (-1,) if xa.ndim != 1 else (1, -1)
        self.check("reshape", xt.reshape(shape), xa.reshape(shape), "exact")


class TestRandomProgram(ArrayTest):

    def run_program(self, seed, late):
        prog = Program(self, seed, late)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for i in range(STEPS):
                state = prog.rng.bit_generator.state
                try:
                    prog.step()
                except Exception as e:
                    raise AssertionError("seed %d, step %d (rng state %r): %s: %s"
                                         % (seed, i, state["state"], type(e).__name__, e)) from e
        return prog.ran

    def test_core_operators(self):
        ran = self.run_program(seed=20240611, late=False)
        for label in ("+", "-", "*", "/", "<", "==", "**", "@", "unary+", "unary-", "unaryabs",
                      "+=", "/=", "T", "reshape"):
            self.assertIn(label, ran)

    @needs_ops(*LATE_OPS)
    def test_with_integer_division_and_bitwise(self):
        ran = self.run_program(seed=777, late=True)
        for label in ("//", "%", "&", "|", "^", "<<", ">>", "unary~", "//=", "&="):
            self.assertIn(label, ran)


if __name__ == "__main__":
    unittest.main()
