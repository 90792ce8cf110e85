"""The array API's manipulation functions and argmin, var, std and
cumulative_sum (vkflow.array_api) against NumPy: tables of calls over
dtypes, negative axes, 0-d and empty arrays, the errors the standard names,
and a guard that proves the results are computed on the device (storage
tensors the host cannot map, every host read made to fail)."""

import os
import unittest

os.environ.setdefault("VKFLOW_VALIDATION", "1")

import numpy as np  # noqa: E402

import vkflow  # noqa: E402
import vkflow.array_api as xp  # noqa: E402
from test_arraylike import ArrayTest, values  # noqa: E402
from test_numpy_protocols import HostReadError, no_host_reads  # noqa: E402

DTYPES = ("float32", "int32", "uint8", "bool")

# name, shape of x, the vkflow.array_api call, NumPy's (both take the module)
CASES = [
    ("concat axis 0", (2, 3), lambda m, x: m.concat([x, x[:1]]),
     lambda x: np.concatenate([x, x[:1]])),
    ("concat axis -1", (2, 3), lambda m, x: m.concat([x, x, x[:, :0]], axis=-1),
     lambda x: np.concatenate([x, x, x[:, :0]], axis=-1)),
    ("concat None", (2, 3), lambda m, x: m.concat((x, x[0]), axis=None),
     lambda x: np.concatenate((x, x[0]), axis=None)),
    ("concat 0-d None", (), lambda m, x: m.concat([x, x], axis=None),
     lambda x: np.concatenate([x, x], axis=None)),
    ("concat empty", (0, 3), lambda m, x: m.concat([x, x]), lambda x: np.concatenate([x, x])),
    ("stack", (2, 3), lambda m, x: m.stack([x, x, x]), lambda x: np.stack([x, x, x])),
    ("stack axis -1", (2, 3), lambda m, x: m.stack((x, x), axis=-1),
     lambda x: np.stack((x, x), axis=-1)),
    ("stack 0-d", (), lambda m, x: m.stack([x, x]), lambda x: np.stack([x, x])),
    ("unstack", (2, 3), lambda m, x: m.stack(m.unstack(x, axis=-1)),
     lambda x: np.stack(tuple(x[:, i] for i in range(3)))),
    ("squeeze", (1, 3, 1), lambda m, x: m.squeeze(x, axis=(0, -1)), lambda x: x[0, :, 0]),
    ("squeeze int", (1, 3), lambda m, x: m.squeeze(x, 0), lambda x: x[0]),
    ("expand_dims", (2, 3), lambda m, x: m.expand_dims(x, axis=1), lambda x: x[:, None]),
    ("expand_dims -1", (2, 3), lambda m, x: m.expand_dims(x, axis=-1), lambda x: x[..., None]),
    ("expand_dims 0-d", (), lambda m, x: m.expand_dims(x), lambda x: x[None]),
    ("flip", (2, 3, 4), lambda m, x: m.flip(x), lambda x: np.flip(x)),
    ("flip axes", (2, 3, 4), lambda m, x: m.flip(x, axis=(0, -1)),
     lambda x: np.flip(x, axis=(0, -1))),
    ("flip 0-d", (), lambda m, x: m.flip(x), lambda x: np.flip(x)),
    ("flip empty", (0, 3), lambda m, x: m.flip(x, axis=1), lambda x: np.flip(x, axis=1)),
    ("roll None", (2, 3), lambda m, x: m.roll(x, 4), lambda x: np.roll(x, 4)),
    ("roll axis", (2, 5), lambda m, x: m.roll(x, -2, axis=-1), lambda x: np.roll(x, -2, -1)),
    ("roll axes", (3, 4), lambda m, x: m.roll(x, (1, 7), axis=(0, 1)),
     lambda x: np.roll(x, (1, 7), axis=(0, 1))),
    ("roll same axis twice", (6,), lambda m, x: m.roll(x, (2, 3), axis=(0, 0)),
     lambda x: np.roll(x, 5)),
    ("roll by size", (4,), lambda m, x: m.roll(x, 8), lambda x: np.roll(x, 8)),
    ("roll 0-d", (), lambda m, x: m.roll(x, 1), lambda x: np.roll(x, 1)),
    ("roll empty", (0, 2), lambda m, x: m.roll(x, 1, axis=0), lambda x: np.roll(x, 1, 0)),
    ("broadcast_to", (3, 1), lambda m, x: m.broadcast_to(x, (2, 3, 4)),
     lambda x: np.broadcast_to(x, (2, 3, 4))),
    ("broadcast_to 0-d", (), lambda m, x: m.broadcast_to(x, (2,)),
     lambda x: np.broadcast_to(x, (2,))),
    ("broadcast_to empty", (1, 3), lambda m, x: m.broadcast_to(x, (0, 3)),
     lambda x: np.broadcast_to(x, (0, 3))),
    ("broadcast_arrays", (3, 1), lambda m, x: m.stack(m.broadcast_arrays(x, x[:, 0][:1])),
     lambda x: np.stack(np.broadcast_arrays(x, x[:, 0][:1]))),
    ("moveaxis", (2, 3, 4), lambda m, x: m.moveaxis(x, 0, -1),
     lambda x: np.moveaxis(x, 0, -1)),
    ("moveaxis tuple", (2, 3, 4), lambda m, x: m.moveaxis(x, (0, 1), (2, 0)),
     lambda x: np.moveaxis(x, (0, 1), (2, 0))),
    ("tile", (2, 3), lambda m, x: m.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3))),
    ("tile longer reps", (3,), lambda m, x: m.tile(x, (2, 1, 2)), lambda x: np.tile(x, (2, 1, 2))),
    ("tile shorter reps", (2, 3), lambda m, x: m.tile(x, (2,)), lambda x: np.tile(x, (2,))),
    ("tile 0", (2, 3), lambda m, x: m.tile(x, (0, 1)), lambda x: np.tile(x, (0, 1))),
    ("tile 0-d", (), lambda m, x: m.tile(x, (3,)), lambda x: np.tile(x, (3,))),
    ("repeat None", (2, 3), lambda m, x: m.repeat(x, 2), lambda x: np.repeat(x, 2)),
    ("repeat axis", (2, 3), lambda m, x: m.repeat(x, 3, axis=-1),
     lambda x: np.repeat(x, 3, axis=-1)),
    ("repeat array", (3, 2), lambda m, x: m.repeat(x, m.asarray(np.array([2, 0, 1])), axis=0),
     lambda x: np.repeat(x, [2, 0, 1], axis=0)),
    ("repeat 0-d", (), lambda m, x: m.repeat(x, 2), lambda x: np.repeat(x, 2)),
    ("repeat empty", (0, 2), lambda m, x: m.repeat(x, 2, axis=1),
     lambda x: np.repeat(x, 2, axis=1)),
    ("argmin None", (3, 4), lambda m, x: m.argmin(x), lambda x: np.argmin(x)),
    ("argmin axis", (3, 4), lambda m, x: m.argmin(x, axis=-1), lambda x: np.argmin(x, -1)),
    ("argmin keepdims", (3, 4), lambda m, x: m.argmin(x, axis=0, keepdims=True),
     lambda x: np.argmin(x, 0, keepdims=True)),
    ("argmin 0-d", (), lambda m, x: m.argmin(x), lambda x: np.argmin(x)),
]

# Float-only: name, shape, vkflow call, NumPy call
FLOAT_CASES = [
    ("var", (3, 4), lambda m, x: m.var(x), lambda x: np.var(x)),
    ("var axis correction", (3, 4), lambda m, x: m.var(x, axis=-1, correction=1),
     lambda x: np.var(x, axis=-1, ddof=1)),
    ("var axes keepdims", (2, 3, 4), lambda m, x: m.var(x, axis=(0, 2), keepdims=True),
     lambda x: np.var(x, axis=(0, 2), keepdims=True)),
    ("var N - correction <= 0", (1, 3), lambda m, x: m.var(x, axis=0, correction=1),
     lambda x: np.full(3, np.nan, np.float32)),
    ("std", (3, 4), lambda m, x: m.std(x, axis=0, correction=0.5),
     lambda x: np.std(x, axis=0, ddof=0.5)),
    ("std 0-d", (), lambda m, x: m.std(x), lambda x: np.std(x)),
    ("argmin nan", (5,), lambda m, x: m.argmin(m.where(x > 1, float("nan"), x)),
     lambda x: np.argmin(np.where(x > 1, np.nan, x))),
]

# cumulative_sum: shape, kwargs (dtype of x runs over DTYPES)
CUMSUM = [
    ((7,), {}), ((7,), {"include_initial": True}), ((3, 5), {"axis": -1}),
    ((3, 5), {"axis": 0, "include_initial": True}), ((0,), {}), ((0,), {"include_initial": True}),
    ((2, 0), {"axis": 1, "include_initial": True}), ((17,), {"dtype": "float64"}),
    ((1,), {}),
]


def np_cumsum(x, axis=None, dtype=None, include_initial=False):
    axis = 0 if axis is None else axis
    if dtype is None:
        dtype = {"b": np.int64, "i": np.int64, "u": np.uint64}.get(x.dtype.kind, x.dtype)
    r = np.cumsum(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        r = np.concatenate([np.zeros(shape, r.dtype), r], axis=axis)
    return r


class TestManipulation(ArrayTest):

    def test_against_numpy(self):
        for dtype in DTYPES:
            for name, shape, f, want in CASES:
                with self.subTest(name, dtype=dtype):
                    a = values(shape, dtype)
                    self.check(f(xp, self.vk(a)), want(a))

    def test_statistics_against_numpy(self):
        for dtype in ("float32", "float64"):
            for name, shape, f, want in FLOAT_CASES:
                with self.subTest(name, dtype=dtype):
                    a = values(shape, "float32").astype(dtype)
                    w = np.asarray(want(a))
                    self.check(f(xp, self.vk(a)), w.astype(dtype) if w.dtype.kind == "f" else w,
                               kind="approx")

    def test_cumulative_sum(self):
        for dtype in DTYPES:
            for shape, kw in CUMSUM:
                with self.subTest(shape=shape, x_dtype=dtype, kwargs=kw):
                    a = values(shape, dtype)
                    self.check(xp.cumulative_sum(self.vk(a), **kw), np_cumsum(a, **kw))

    def test_join_many(self):
        """More arrays than one library call takes (64): joined in groups."""
        parts = [values((2, 3), "float32") + i for i in range(150)]
        ts = [self.vk(p) for p in parts]
        self.check(xp.concat(ts, axis=1), np.concatenate(parts, axis=1))
        self.check(xp.stack(ts, axis=1), np.stack(parts, axis=1))
        self.check(xp.stack(ts), np.stack(parts))

    def test_views_share_memory(self):
        """squeeze, expand_dims, flip, moveaxis, broadcast_to and unstack are
        views; concat, roll, tile and repeat are new tensors."""
        t = self.vk(values((2, 3), "float32"))
        for name, v in [("flip", xp.flip(t)), ("moveaxis", xp.moveaxis(t, 0, 1)),
                        ("expand_dims", xp.expand_dims(t, axis=0)),
                        ("broadcast_to", xp.broadcast_to(t, (4, 2, 3))),
                        ("unstack", xp.unstack(t)[1])]:
            with self.subTest(name):
                self.assertIs(v.base, t)
        for name, r in [("concat", xp.concat([t, t])), ("roll", xp.roll(t, 1)),
                        ("tile", xp.tile(t, (2,))), ("repeat", xp.repeat(t, 2))]:
            with self.subTest(name):
                self.assertIs(type(r), vkflow.Tensor)

    def test_promotion(self):
        a, b = values((2,), "int16"), values((3,), "int32")
        self.check(xp.concat([self.vk(a), self.vk(b)]), np.concatenate([a, b]))
        self.check(xp.stack([self.vk(a), self.vk(b[:2])]), np.stack([a, b[:2]]))

    def test_errors(self):
        t, e = self.vk(values((2, 3), "float32")), self.vk(values((), "float32"))
        cases = [
            ("concat 0-d", ValueError, lambda: xp.concat([e, e])),
            ("concat shapes", ValueError, lambda: xp.concat([t, t.mT])),
            ("concat ndims", ValueError, lambda: xp.concat([t, t[0]])),
            ("concat axis", IndexError, lambda: xp.concat([t, t], axis=2)),
            ("concat none", ValueError, lambda: xp.concat([])),
            ("stack shapes", ValueError, lambda: xp.stack([t, t[0]])),
            ("stack axis", IndexError, lambda: xp.stack([t, t], axis=-4)),
            ("squeeze size", ValueError, lambda: xp.squeeze(t, axis=0)),
            ("squeeze axis", IndexError, lambda: xp.squeeze(t, axis=2)),
            ("expand_dims axis", IndexError, lambda: xp.expand_dims(t, axis=3)),
            ("expand_dims -axis", IndexError, lambda: xp.expand_dims(t, axis=-4)),
            ("flip axis", IndexError, lambda: xp.flip(t, axis=2)),
            ("roll axis", IndexError, lambda: xp.roll(t, 1, axis=-3)),
            ("roll lengths", ValueError, lambda: xp.roll(t, (1, 2, 3), axis=(0, 1))),
            ("broadcast_to", ValueError, lambda: xp.broadcast_to(t, (2, 4))),
            ("broadcast_to fewer", ValueError, lambda: xp.broadcast_to(t, (3,))),
            ("broadcast_arrays", ValueError, lambda: xp.broadcast_arrays(t, t.mT)),
            ("moveaxis repeated", ValueError, lambda: xp.moveaxis(t, (0, 0), (0, 1))),
            ("moveaxis lengths", ValueError, lambda: xp.moveaxis(t, (0, 1), (0,))),
            ("tile negative", ValueError, lambda: xp.tile(t, (-1,))),
            ("repeat negative", ValueError, lambda: xp.repeat(t, -1)),
            ("repeat counts", ValueError, lambda: xp.repeat(t, xp.asarray(np.array([1, 2])),
                                                               axis=1)),
            ("unstack 0-d", ValueError, lambda: xp.unstack(e)),
            ("cumulative_sum 2-d None", ValueError, lambda: xp.cumulative_sum(t)),
            ("var ints", TypeError, lambda: xp.var(self.vk(values((3,), "int32")))),
            ("not a tensor", TypeError, lambda: xp.flip(np.zeros(3))),
        ]
        for name, exc, f in cases:
            with self.subTest(name):
                with self.assertRaises(exc):
                    f()

    def test_on_the_device(self):
        """Storage tensors (not host-mapped), every host read refused: each
        function computes on the device."""
        a = values((2, 3), "float32")
        t = self.mgr.tensor(a.shape, dtype="float32", memory="storage")
        t[...] = a
        self.assertFalse(t.mapped)
        calls = [
            ("concat", lambda: xp.concat([t, t], axis=1), np.concatenate([a, a], 1)),
            ("stack", lambda: xp.stack([t, t]), np.stack([a, a])),
            ("flip", lambda: xp.flip(t) + 0.0, np.flip(a)),
            ("roll", lambda: xp.roll(t, (1, 1), axis=(0, 1)), np.roll(a, (1, 1), (0, 1))),
            ("broadcast_to", lambda: xp.broadcast_to(t, (2, 2, 3)) + 0.0,
             np.broadcast_to(a, (2, 2, 3))),
            ("tile", lambda: xp.tile(t, (2, 2)), np.tile(a, (2, 2))),
            ("repeat", lambda: xp.repeat(t, 2, axis=0), np.repeat(a, 2, 0)),
            ("squeeze", lambda: xp.squeeze(xp.expand_dims(t, axis=0), 0) + 0.0, a),
            ("moveaxis", lambda: xp.moveaxis(t, 0, 1) + 0.0, a.T),
            ("unstack", lambda: xp.unstack(t)[1] + 0.0, a[1]),
            ("argmin", lambda: xp.argmin(t, axis=1), np.argmin(a, 1)),
            ("var", lambda: xp.var(t, axis=0, correction=1), np.var(a, 0, ddof=1)),
            ("std", lambda: xp.std(t), np.std(a)),
            ("cumulative_sum", lambda: xp.cumulative_sum(t, axis=1, include_initial=True),
             np_cumsum(a, axis=1, include_initial=True)),
        ]
        with no_host_reads():
            with self.assertRaises(HostReadError):
                np.asarray(t)
        for name, f, want in calls:
            with self.subTest(name):
                with no_host_reads():
                    got = f()
                self.check(got, want, kind="approx")


if __name__ == "__main__":
    unittest.main()
