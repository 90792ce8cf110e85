"""Graphs for the vkflow package: Algorithm, Graph, Node, Exec and Run.

Made by a :class:`vkflow.Manager` (``Manager.graph``, ``Manager.kernel``,
``Manager.algorithm``); use the classes as ``vkflow.Graph`` and so on.
"""

import ctypes
import numbers
import threading
import weakref

from ctypes import byref, c_int32, c_int64, c_size_t, c_uint64

from . import _lib
from ._dtypes import _numpy
from ._errors import _check
from ._handle import _Handle, _ns
from ._tensor import _tensor_handle
from ._timeline import _timeline_point


def _push_bytes(push):
    """Push constants as bytes: None (none), bytes-like (as is), a NumPy
    array or scalar (its bytes), a Python float (float32), a Python int
    (int32), or a tuple or list of these, packed in order."""
    if push is None:
        return b""
    if isinstance(push, (bytes, bytearray, memoryview)):
        return bytes(push)
    np = _numpy()
    if isinstance(push, (np.ndarray, np.generic)):
        return np.ascontiguousarray(push).tobytes()
    if isinstance(push, bool):
        raise TypeError("push constants: bool is ambiguous; pass numpy.uint32(%d)" % push)
    if isinstance(push, numbers.Integral):
        return np.int32(push).tobytes()
    if isinstance(push, numbers.Real):
        return np.float32(push).tobytes()
    if isinstance(push, (tuple, list)):
        return b"".join(_push_bytes(v) for v in push)
    raise TypeError("push constants must be bytes, a NumPy array or scalar, a float, an int "
                    "or a tuple of them, not %s" % type(push).__name__)


def _host_array(t, array, what, writable):
    """Checks a NumPy array used as a host buffer for tensor t."""
    np = _numpy()
    if not isinstance(array, np.ndarray):
        raise TypeError("%s: the host buffer must be a numpy.ndarray, not %s"
                        % (what, type(array).__name__))
    if not array.flags.c_contiguous:
        raise ValueError("%s: the host array must be C-contiguous" % what)
    if writable and not array.flags.writeable:
        raise ValueError("%s: the host array is read-only" % what)
    if array.dtype.name != t.dtype:
        raise ValueError("%s: the array's dtype is %s, the tensor's %s"
                         % (what, array.dtype.name, t.dtype))
    if array.nbytes != t.nbytes:
        raise ValueError("%s: the array has %d bytes, the tensor %d"
                         % (what, array.nbytes, t.nbytes))
    return array


def _text(fn, handle):
    size = 4096
    while True:
        buf = ctypes.create_string_buffer(size)
        n = c_size_t()
        _check(fn(handle, buf, size, byref(n)))
        if n.value < size:
            return buf.value.decode("utf-8", "replace")
        size = n.value + 1


class Algorithm(_Handle):
    """A compute pipeline bound to tensors, dispatched by :meth:`Graph.dispatch`.

    Made by :meth:`Manager.kernel` (built-in kernels) or
    :meth:`Manager.algorithm` (SPIR-V). It keeps its tensors' Python objects
    alive. Graphs and Execs using it keep it alive; closing it (or one of its
    tensors) explicitly makes their compile and runs raise ClosedError.
    """

    _kind = "Algorithm"
    _closer = "algorithm_close"

    def __init__(self, manager, handle, tensors=()):
        self._manager = manager
        self._handle = handle
        self._tensors = [t for t in tensors if t is not None]

    @property
    def push_size(self):
        """The size in bytes of the pipeline's push constants."""
        n = c_int32()
        _check(_lib.lib().algorithm_push_size(self._h(), byref(n)))
        return n.value

    def __repr__(self):
        return "<vkflow.Algorithm %s>" % ("closed" if self.closed else "handle=%d" % self._handle)


class Node:
    """A recorded node of a :class:`Graph`: its index (``id``, in recording
    order) and methods that set its options; each returns the node."""

    __slots__ = ("graph", "id", "array")

    def __init__(self, graph, index, array=None):
        self.graph = graph
        self.id = index
        #: The host array of an upload or download node, else None.
        self.array = array

    def on_queue(self, queue):
        """Pins the node to logical queue ``queue`` (ValueError if the Manager
        has no such queue)."""
        _check(_lib.lib().graph_node_queue(self.graph._h(), self.id, int(queue)))
        return self

    def named(self, name):
        """Names the node in the schedule, the DOT text and errors."""
        _check(_lib.lib().graph_node_name(self.graph._h(), self.id, str(name).encode()))
        return self

    def after(self, *nodes):
        """Orders the node after ``nodes`` beyond what its accesses imply. An
        order that contradicts the accesses makes a cycle: compile raises."""
        for n in nodes:
            if not isinstance(n, Node) or n.graph is not self.graph:
                raise ValueError("after: %r is not a node of this graph" % (n,))
        ids = (c_int32 * len(nodes))(*[n.id for n in nodes]) if nodes else None
        _check(_lib.lib().graph_node_after(self.graph._h(), self.id, len(nodes), ids))
        return self

    def __repr__(self):
        return "<vkflow.Node %d>" % self.id


class Graph(_Handle):
    """GPU work recorded as nodes; :meth:`compile` infers the dependencies
    from what each node reads and writes and returns an :class:`Exec`.

    Recording order is the meaning: the graph computes what running its nodes
    one after another would. Every recording method takes ``queue`` (pin to a
    logical queue) and ``name`` and returns a :class:`Node`. A failed call
    raises, and the graph stays failed: later calls and compile raise the
    same error. Closing the graph leaves the Execs compiled from it alone;
    closing its Manager closes the graph.

    Upload and download nodes take NumPy arrays (C-contiguous, the tensor's
    dtype and size) as host buffers, not copies: an upload's array is read at
    every run, a download's written when a run completes. The graph and
    every Exec compiled from it keep the arrays alive.

    Example, y = 2x + y on the GPU::

        g = mgr.graph()
        g.upload(x, xs)
        g.dispatch(mgr.kernel("saxpy", x, None, y), 2.0)
        g.download(y, ys)
        ex = g.compile()
        ex.run()        # ys holds the result
    """

    _kind = "Graph"
    _closer = "graph_close"

    def __init__(self, manager):
        h = c_uint64()
        _check(_lib.lib().graph_new(manager._h(), byref(h)))
        self._manager = manager
        self._handle = h.value
        # Host arrays the nodes point into, and the tensors and algorithms
        # they name: the library's graph holds no reference, so a Python
        # object collected before compile would close them.
        self._keep = []

    def __len__(self):
        n = c_int32()
        _check(_lib.lib().graph_len(self._h(), byref(n)))
        return n.value

    def _node(self, rc_fn, queue, name, array=None):
        idx = c_int32(-1)
        _check(rc_fn(byref(idx)))
        node = Node(self, idx.value, array)
        if queue is not None:
            node.on_queue(queue)
        if name is not None:
            node.named(name)
        return node

    def dispatch(self, algorithm, push=None, *, queue=None, name=None):
        """Records a dispatch of ``algorithm`` with the tensors bound to it now.
        ``push``: its push constants (see below), as many bytes as
        ``algorithm.push_size``. Reads and writes come from the shader.

        Push constants are bytes, a NumPy array or scalar (its bytes), a float
        (float32), an int (int32), or a tuple of these, packed in order."""
        if not isinstance(algorithm, Algorithm):
            raise TypeError("dispatch: algorithm must be a vkflow.Algorithm, not %s"
                            % type(algorithm).__name__)
        data = _push_bytes(push)
        L = _lib.lib()
        node = self._node(lambda out: L.graph_dispatch(self._h(), algorithm._h(), data,
                                                       len(data), out), queue, name)
        self._keep.append(algorithm)
        return node

    def copy(self, src, dst, regions=None, *, queue=None, name=None):
        """Records a copy of src into dst: whole tensors, or ``regions``, a
        list of (src element, dst element, element count)."""
        regions = list(regions or ())
        flat = []
        for r in regions:
            s, d, n = r
            flat += [int(s), int(d), int(n)]
        arr = (c_int64 * len(flat))(*flat) if flat else None
        sh, dh = _tensor_handle(src, "src"), _tensor_handle(dst, "dst")
        L = _lib.lib()
        node = self._node(lambda out: L.graph_copy(self._h(), sh, dh, len(regions), arr, out),
                          queue, name)
        self._keep += [src, dst]
        return node

    def fill(self, tensor, value, *, queue=None, name=None):
        """Records a fill of every element of ``tensor`` with ``value``
        (converted to the tensor's dtype)."""
        th = _tensor_handle(tensor, "tensor")
        data = _numpy().array(value, dtype=tensor.dtype).tobytes()
        L = _lib.lib()
        node = self._node(lambda out: L.graph_fill(self._h(), th, data, len(data), out),
                          queue, name)
        self._keep.append(tensor)
        return node

    def upload(self, tensor, array, *, queue=None, name=None):
        """Records a host-to-device copy of ``array`` into ``tensor``. The
        array is read at every run, when the run is submitted: change it
        between runs to feed new data."""
        th = _tensor_handle(tensor, "tensor")
        array = _host_array(tensor, array, "upload", writable=False)
        L = _lib.lib()
        node = self._node(lambda out: L.graph_upload(self._h(), th, array.ctypes.data,
                                                     array.nbytes, out), queue, name, array)
        self._keep += [tensor, array]
        return node

    def download(self, tensor, out=None, *, queue=None, name=None):
        """Records a device-to-host copy of ``tensor`` into ``out`` (a new
        array of the tensor's shape and dtype when None; ``node.array``). It
        is written when a run completes: by ``Exec.run`` or ``Run.wait``."""
        if out is None:
            _tensor_handle(tensor, "tensor")
            out = _numpy().empty(tensor.shape, dtype=tensor.dtype)
        th = _tensor_handle(tensor, "tensor")
        out = _host_array(tensor, out, "download", writable=True)
        L = _lib.lib()
        node = self._node(lambda o: L.graph_download(self._h(), th, out.ctypes.data, out.nbytes,
                                                     o), queue, name, out)
        self._keep += [tensor, out]
        return node

    def input(self, *tensors):
        """Declares tensors the host fills before runs, so reading them with
        no writer in the graph draws no warning."""
        hs = [_tensor_handle(t, "tensor") for t in tensors]
        arr = (c_uint64 * len(hs))(*hs) if hs else None
        _check(_lib.lib().graph_input(self._h(), len(hs), arr))
        self._keep += tensors
        return self

    def compile(self, queues=None, max_nodes_per_submit=0, max_work_per_submit=0):
        """Compiles the graph into an :class:`Exec`. ``queues`` restricts the
        logical queues it may use (default: all); the caps limit one command
        buffer (0: the library's defaults). Raises ValueError for a cycle, a
        bad queue or a dispatch writing one tensor twice, ClosedError for a
        node whose tensor or algorithm was closed."""
        qs = [int(q) for q in (queues or ())]
        arr = (c_int32 * len(qs))(*qs) if qs else None
        h = c_uint64()
        _check(_lib.lib().graph_compile(self._h(), len(qs), arr, int(max_nodes_per_submit),
                                        int(max_work_per_submit), byref(h)))
        return self._manager._adopt(Exec(self._manager, h.value, list(self._keep), self))

    def __repr__(self):
        if self.closed:
            return "<vkflow.Graph closed>"
        return "<vkflow.Graph %d nodes>" % len(self)


class Exec(_Handle):
    """A compiled graph: command buffers recorded once and replayed by every
    run. ``str(exec)`` is the schedule (submits, queues, waits, groups and
    barriers); :meth:`dot` the same as Graphviz text.

    Runs wait for ``wait`` and signal ``signal``, optional (Timeline, value)
    pairs, so graphs compose with sequences and DLPack consumers. The Exec
    keeps its graph's host arrays (and Python objects) alive. Closing it, or
    its Manager, closes it and its :class:`Run` handles; a closed Exec or Run
    raises ClosedError when used.
    """

    _kind = "Exec"
    _closer = "exec_close"

    def __init__(self, manager, handle, keep, graph=None):
        self._manager = manager
        self._handle = handle
        self._keep = keep
        # The graph compiled from, weakly: a Node of it names one of the
        # Exec's nodes; a Node of another graph does not, whatever its id
        # (a live Node keeps its own graph alive, so a dead reference
        # here matches no Node).
        self._graph = weakref.ref(graph) if graph is not None else (lambda: None)
        self._runs = weakref.WeakSet()  # closed with the Exec
        self._runs_lock = threading.Lock()

    def close(self):
        """Releases the Exec and its runs: submitted runs still complete, but
        their downloads are not copied out and ``Run.wait`` raises
        ClosedError. Idempotent."""
        with self._runs_lock:
            runs = list(self._runs)
            self._runs.clear()
        for r in runs:
            r.close()
        _Handle.close(self)

    def run(self, wait=None, signal=None, timeout=None):
        """Runs the graph and waits for it (``timeout`` in seconds, None: no
        deadline); download arrays hold the results when it returns."""
        wt, wv = (0, 0) if wait is None else _timeline_point(wait, "wait")
        st, sv = (0, 0) if signal is None else _timeline_point(signal, "signal")
        _check(_lib.lib().exec_run(self._h(), wt, wv, st, sv, _ns(timeout)))
        return self

    def run_async(self, wait=None, signal=None):
        """Submits a run and returns a :class:`Run` at once. A graph with
        uploads or downloads runs one at a time: PendingError while the
        previous run is in flight."""
        wt, wv = (0, 0) if wait is None else _timeline_point(wait, "wait")
        st, sv = (0, 0) if signal is None else _timeline_point(signal, "signal")
        h = c_uint64()
        _check(_lib.lib().exec_run_async(self._h(), wt, wv, st, sv, byref(h)))
        r = Run(self, h.value)
        with self._runs_lock:
            self._runs.add(r)
        return self._manager._adopt(r)

    def rebind(self, old, new):
        """Replaces tensor ``old`` with ``new`` (same dtype and size, not used
        by the graph yet) in every node, keeping the schedule."""
        _check(_lib.lib().exec_rebind(self._h(), _tensor_handle(old, "old"),
                                      _tensor_handle(new, "new")))
        self._keep.append(new)  # collected, it would close, and runs would fail
        return self

    def set_push(self, node, push):
        """Changes the push constants of dispatch ``node`` (a Node of the
        graph compiled from, or its id). A Node of another graph raises
        ValueError, whatever its id."""
        if isinstance(node, Node):
            if node.graph is not self._graph():
                raise ValueError("set_push: %r is not a node of the graph this Exec was compiled from" % (node,))
            idx = node.id
        else:
            idx = int(node)
        data = _push_bytes(push)
        _check(_lib.lib().exec_set_push(self._h(), idx, data, len(data)))
        return self

    def schedule(self):
        """The schedule as text (also ``str(exec)``)."""
        return _text(_lib.lib().exec_schedule, self._h())

    def dot(self):
        """The graph and its schedule in Graphviz's DOT language."""
        return _text(_lib.lib().exec_dot, self._h())

    @property
    def warnings(self):
        """What compile noticed but accepted (reads of tensors nothing wrote)."""
        text = _text(_lib.lib().exec_warnings, self._h())
        return text.split("\n") if text else []

    def __str__(self):
        if self.closed:
            return "<vkflow.Exec closed>"
        return self.schedule()

    def __repr__(self):
        return "<vkflow.Exec %s>" % ("closed" if self.closed else "handle=%d" % self._handle)


class Run(_Handle):
    """A submitted run of an :class:`Exec` (from ``Exec.run_async``).

    Closing the run only drops the handle (the run goes on). Closing its Exec
    or its Manager closes it: the run still completes, but ``wait`` and
    ``done`` raise ClosedError."""

    _kind = "Run"
    _closer = "run_close"

    def __init__(self, exec_, handle):
        self._exec = exec_  # keeps the Exec, and so its host arrays, alive
        self._handle = handle

    def wait(self, timeout=None):
        """Blocks until the run completes (TimeoutError after ``timeout``
        seconds; None: no deadline). Download arrays then hold its results."""
        _check(_lib.lib().run_wait(self._h(), _ns(timeout)))
        return self

    @property
    def done(self):
        """True once the run completed or failed (downloads are filled by
        wait, not here)."""
        d = c_int32()
        _check(_lib.lib().run_done(self._h(), byref(d)))
        return bool(d.value)

    def __repr__(self):
        return "<vkflow.Run %s>" % ("closed" if self.closed else "handle=%d" % self._handle)
