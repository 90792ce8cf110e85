"""Loading libvkflow.so and declaring its C API (capi/vkflow.h) for ctypes.

Private to the vkflow package. The library is found, in order, at:

1. the path in the environment variable ``VKFLOW_LIB``;
2. ``libvkflow.so`` next to this file (``make python`` copies it there);
3. ``build/libvkflow.so`` in the repository this file lives in.

It is loaded with :class:`ctypes.CDLL`, so every call releases the GIL. That
matters: the library may call a producer's DLPack deleter (NumPy's, for
example, which takes the GIL itself) from one of its own threads while a
Python thread is inside a vkflow call.
"""

import ctypes
import os
import threading

from ctypes import (POINTER, c_char_p, c_float, c_int, c_int32, c_int64, c_size_t,
                    c_uint32, c_uint64, c_void_p)

# Return codes (enum in vkflow.h).
OK = 0
ERR_INVALID = -1
ERR_CLOSED = -2
ERR_UNSUPPORTED = -3
ERR_VULKAN = -4
ERR_TIMEOUT = -5
ERR_OTHER = -6
ERR_PENDING = -7
ERR_FAILED = -8
ERR_BUSY = -9

# Manager flags.
VALIDATION = 1

# Memory kinds.
MEMORY_DEVICE = 0
MEMORY_HOST = 1
MEMORY_STORAGE = 2
MEMORY_EXPORTABLE = 3  # Device memory that vkflow_tensor_export_memory can export

# DLPack copy modes.
COPY_IF_NEEDED = 0
COPY_ALWAYS = 1
COPY_NEVER = 2

# Capsule names, by index (vkflow_capsule_name).
CAPSULE_LEGACY = 0
CAPSULE_VERSIONED = 1
CAPSULE_USED_LEGACY = 2
CAPSULE_USED_VERSIONED = 3

MAX_NDIM = 32  # vkflow_tensor_info fills at most 32 shape entries


class MemoryHandleC(ctypes.Structure):
    """vkflow_memory_handle (capi/vkflow.h): 72 bytes, no implicit padding."""
    _fields_ = [("size", c_uint64), ("offset", c_uint64), ("bytes", c_uint64),
                ("fd", c_int32), ("memory_type", c_uint32), ("dedicated", c_int32),
                ("reserved", c_uint32), ("device_uuid", ctypes.c_uint8 * 16),
                ("driver_uuid", ctypes.c_uint8 * 16)]


assert ctypes.sizeof(MemoryHandleC) == 72


class TensorDescC(ctypes.Structure):
    """vkflow_tensor_desc (capi/vkflow.h): a new tensor's handle and metadata."""
    _fields_ = [("handle", c_uint64), ("ndim", c_int32), ("memory", c_int32),
                ("mapped", c_int32), ("read_only", c_int32), ("dtype", ctypes.c_char * 16),
                ("shape", c_int64 * MAX_NDIM)]


assert ctypes.sizeof(TensorDescC) == 8 + 16 + 16 + 8 * MAX_NDIM

_p_u64 = POINTER(c_uint64)
_p_i64 = POINTER(c_int64)
_p_i32 = POINTER(c_int32)

# name: (restype, argtypes), one entry per function of vkflow.h.
_PROTOTYPES = {
    "vkflow_last_error": (c_size_t, (c_char_p, c_size_t)),
    "vkflow_manager_new": (c_int, (c_int32, c_uint32, _p_u64)),
    "vkflow_manager_close": (c_int, (c_uint64,)),
    "vkflow_manager_mem_stats": (c_int, (c_uint64, _p_i64, _p_i64)),
    "vkflow_validation_messages": (c_int64, (c_char_p, c_size_t)),
    "vkflow_set_device_env": (c_int, (c_char_p,)),
    "vkflow_set_env": (c_int, (c_char_p, c_char_p)),
    "vkflow_tensor_new": (c_int, (c_uint64, c_char_p, c_int32, _p_i64, c_void_p, c_uint64,
                                  c_int32, _p_u64)),
    "vkflow_tensor_close": (c_int, (c_uint64,)),
    "vkflow_tensor_read": (c_int, (c_uint64, c_void_p, c_uint64)),
    "vkflow_tensor_write": (c_int, (c_uint64, c_void_p, c_uint64)),
    "vkflow_tensor_info": (c_int, (c_uint64, c_char_p, c_size_t, _p_i32, _p_i64, _p_i32,
                                   _p_i32, _p_i32)),
    "vkflow_tensor_dlpack_device": (c_int, (c_uint64, _p_i32, _p_i32)),
    "vkflow_sequence_new": (c_int, (c_uint64, c_int32, _p_u64)),
    "vkflow_sequence_close": (c_int, (c_uint64,)),
    "vkflow_sequence_kernel": (c_int, (c_uint64, c_char_p, c_uint64, c_uint64, c_uint64,
                                       c_float)),
    "vkflow_sequence_copy": (c_int, (c_uint64, c_uint64, c_uint64)),
    "vkflow_sequence_eval": (c_int, (c_uint64, c_int64)),
    "vkflow_sequence_submit": (c_int, (c_uint64, c_uint64, c_uint64, c_uint64, c_uint64)),
    "vkflow_timeline_new": (c_int, (c_uint64, c_uint64, _p_u64)),
    "vkflow_timeline_close": (c_int, (c_uint64,)),
    "vkflow_timeline_value": (c_int, (c_uint64, _p_u64)),
    "vkflow_timeline_signal": (c_int, (c_uint64, c_uint64)),
    "vkflow_timeline_wait": (c_int, (c_uint64, c_uint64, c_int64)),
    "vkflow_timeline_semaphore": (c_int, (c_uint64, _p_u64)),
    "vkflow_tensor_export_memory": (c_int, (c_uint64, POINTER(MemoryHandleC))),
    "vkflow_tensor_import_memory": (c_int, (c_uint64, POINTER(MemoryHandleC), c_char_p, c_int32,
                                            _p_i64, _p_u64)),
    "vkflow_timeline_new_exportable": (c_int, (c_uint64, c_uint64, _p_u64)),
    "vkflow_timeline_export_fd": (c_int, (c_uint64, _p_i32)),
    "vkflow_timeline_import_fd": (c_int, (c_uint64, c_int32, _p_u64)),
    "vkflow_manager_new_queues": (c_int, (c_int32, c_uint32, c_int32, c_int32, _p_u64)),
    "vkflow_manager_new_traced": (c_int, (c_int32, c_uint32, c_int32, c_int32, c_char_p, _p_u64)),
    "vkflow_manager_queue_count": (c_int, (c_uint64, _p_i32)),
    "vkflow_kernel_new": (c_int, (c_uint64, c_char_p, c_uint64, c_uint64, c_uint64, _p_u64)),
    "vkflow_algorithm_new": (c_int, (c_uint64, c_void_p, c_uint64, c_int32, _p_u64, c_uint32,
                                     c_uint32, c_uint32, _p_u64)),
    "vkflow_algorithm_close": (c_int, (c_uint64,)),
    "vkflow_algorithm_push_size": (c_int, (c_uint64, _p_i32)),
    "vkflow_graph_new": (c_int, (c_uint64, _p_u64)),
    "vkflow_graph_close": (c_int, (c_uint64,)),
    "vkflow_graph_len": (c_int, (c_uint64, _p_i32)),
    "vkflow_graph_dispatch": (c_int, (c_uint64, c_uint64, c_void_p, c_uint64, _p_i32)),
    "vkflow_graph_copy": (c_int, (c_uint64, c_uint64, c_uint64, c_int32, _p_i64, _p_i32)),
    "vkflow_graph_fill": (c_int, (c_uint64, c_uint64, c_void_p, c_uint64, _p_i32)),
    "vkflow_graph_upload": (c_int, (c_uint64, c_uint64, c_void_p, c_uint64, _p_i32)),
    "vkflow_graph_download": (c_int, (c_uint64, c_uint64, c_void_p, c_uint64, _p_i32)),
    "vkflow_graph_node_queue": (c_int, (c_uint64, c_int32, c_int32)),
    "vkflow_graph_node_name": (c_int, (c_uint64, c_int32, c_char_p)),
    "vkflow_graph_node_after": (c_int, (c_uint64, c_int32, c_int32, _p_i32)),
    "vkflow_graph_input": (c_int, (c_uint64, c_int32, _p_u64)),
    "vkflow_graph_compile": (c_int, (c_uint64, c_int32, _p_i32, c_int32, c_uint64, _p_u64)),
    "vkflow_exec_close": (c_int, (c_uint64,)),
    "vkflow_exec_run": (c_int, (c_uint64, c_uint64, c_uint64, c_uint64, c_uint64, c_int64)),
    "vkflow_exec_run_async": (c_int, (c_uint64, c_uint64, c_uint64, c_uint64, c_uint64, _p_u64)),
    "vkflow_run_wait": (c_int, (c_uint64, c_int64)),
    "vkflow_run_done": (c_int, (c_uint64, _p_i32)),
    "vkflow_run_close": (c_int, (c_uint64,)),
    "vkflow_exec_rebind": (c_int, (c_uint64, c_uint64, c_uint64)),
    "vkflow_exec_set_push": (c_int, (c_uint64, c_int32, c_void_p, c_uint64)),
    "vkflow_exec_schedule": (c_int, (c_uint64, c_char_p, c_size_t, POINTER(c_size_t))),
    "vkflow_exec_dot": (c_int, (c_uint64, c_char_p, c_size_t, POINTER(c_size_t))),
    "vkflow_exec_warnings": (c_int, (c_uint64, c_char_p, c_size_t, POINTER(c_size_t))),
    "vkflow_dlpack_export": (c_int, (c_uint64, c_int32, c_int32, c_int32, c_int32, c_int32,
                                     c_uint64, c_uint64, c_int64, POINTER(c_void_p), _p_i32)),
    "vkflow_dlpack_import": (c_int, (c_uint64, c_void_p, c_int32, c_int64, _p_u64, _p_i32)),
    "vkflow_dlpack_import_copy": (c_int, (c_uint64, c_void_p, c_int32, c_int32, c_int64, _p_u64,
                                          _p_i32)),
    "vkflow_dlpack_live": (c_int64, ()),
    "vkflow_cuda_device": (c_int, (c_uint64, _p_i32)),
    "vkflow_dlpack_export_cuda": (c_int, (c_uint64, c_int32, c_int32, c_int32, c_int32, c_int64,
                                          c_int64, POINTER(c_void_p), _p_i32)),
    "vkflow_op_call": (c_int, (c_uint64, c_char_p, _p_u64, c_int32, _p_u64, c_int32, c_char_p)),
    "vkflow_op_call_timeout": (c_int, (c_uint64, c_char_p, _p_u64, c_int32, _p_u64, c_int32,
                                       c_char_p, c_int64)),
    "vkflow_op_call_async": (c_int, (c_uint64, c_char_p, _p_u64, c_int32, _p_u64, c_int32,
                                     c_char_p)),
    "vkflow_op_call_new": (c_int, (c_uint64, c_char_p, _p_u64, c_int32, c_char_p,
                                   POINTER(TensorDescC))),
    "vkflow_synchronize": (c_int, (c_uint64, c_int64)),
    "vkflow_tensor_wait": (c_int, (c_uint64, c_int64)),
    "vkflow_op_cache_stats": (c_int, (c_uint64, c_void_p)),
    "vkflow_wait_stats": (c_int, (c_uint64, _p_u64, _p_u64)),
    "vkflow_host_import_alignment": (c_int, (c_uint64, _p_u64)),
    "vkflow_op_register_glsl": (c_int, (c_char_p, c_char_p, c_int32)),
    "vkflow_op_register_spirv": (c_int, (c_char_p, c_void_p, c_size_t, c_int32)),
    "vkflow_op_unregister": (c_int, (c_char_p,)),
    "vkflow_op_names": (c_size_t, (c_char_p, c_size_t)),
    "vkflow_op_vjp": (c_int, (c_uint64, c_char_p, _p_u64, c_int32, _p_u64, c_int32, _p_u64, c_int32,
                              c_char_p, _p_i32, _p_u64)),
    "vkflow_op_gradient": (c_int, (c_char_p, _p_i32, c_char_p, c_size_t, POINTER(c_size_t))),
    "vkflow_op_register_vjp": (c_int, (c_char_p, c_char_p)),
    "vkflow_op_schema": (c_int, (c_char_p, c_char_p, c_size_t, POINTER(c_size_t))),
    "vkflow_tape_new": (c_int, (c_uint64, c_uint64, _p_u64)),
    "vkflow_tape_close": (c_int, (c_uint64,)),
    "vkflow_tape_queue": (c_int, (c_uint64, c_int32)),
    "vkflow_tape_call": (c_int, (c_uint64, c_char_p, _p_u64, c_int32, c_char_p, _p_u64, c_int32)),
    "vkflow_tape_device_bytes": (c_int, (c_uint64, POINTER(c_uint64))),
    "vkflow_soft_render": (c_int, (c_uint64, c_uint64, c_uint64, c_char_p, _p_u64)),
    "vkflow_tape_grad": (c_int, (c_uint64, _p_u64, c_int32, _p_u64, _p_u64, c_int32, _p_u64, _p_u64,
                                 _p_u64)),
    # The names are static C strings: keep them as addresses (c_void_p),
    # never as Python bytes, because PyCapsule stores the pointer.
    "vkflow_capsule_name": (c_void_p, (c_int32,)),
    "vkflow_capsule_destructor": (None, (c_void_p,)),
}


def library_path():
    """Returns the path libvkflow.so is loaded from (see the module doc)."""
    env = os.environ.get("VKFLOW_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.join(here, "libvkflow.so")
    if os.path.exists(beside):
        return beside
    root = os.path.dirname(os.path.dirname(here))
    return os.path.join(root, "build", "libvkflow.so")


class _Library:
    """The loaded library plus the few pieces of the Python C API we need."""

    def __init__(self, path):
        try:
            self.cdll = ctypes.CDLL(path)
        except OSError as e:
            raise ImportError(
                "vkflow: cannot load %s (%s); build it with `make python` or `make capi`, "
                "or point VKFLOW_LIB at it" % (path, e)) from e
        self.path = path
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(self.cdll, name)
            fn.restype = restype
            fn.argtypes = argtypes
            setattr(self, name[len("vkflow_"):], fn)

        # Static capsule names and the capsule destructor, as raw addresses.
        self.capsule_names = [self.capsule_name(i) for i in range(4)]
        if not all(self.capsule_names):
            raise ImportError("vkflow: vkflow_capsule_name returned NULL")
        self.capsule_destructor_addr = ctypes.cast(self.cdll.vkflow_capsule_destructor,
                                                   c_void_p).value

        # PyDLL functions run with the GIL held and raise when they set an
        # error, which is what the capsule API needs.
        api = ctypes.pythonapi
        self.PyCapsule_New = api.PyCapsule_New
        self.PyCapsule_New.restype = ctypes.py_object
        self.PyCapsule_New.argtypes = (c_void_p, c_void_p, c_void_p)
        self.PyCapsule_IsValid = api.PyCapsule_IsValid
        self.PyCapsule_IsValid.restype = c_int
        self.PyCapsule_IsValid.argtypes = (ctypes.py_object, c_char_p)
        self.PyCapsule_GetPointer = api.PyCapsule_GetPointer
        self.PyCapsule_GetPointer.restype = c_void_p
        self.PyCapsule_GetPointer.argtypes = (ctypes.py_object, c_char_p)
        self.PyCapsule_SetName = api.PyCapsule_SetName
        self.PyCapsule_SetName.restype = c_int
        self.PyCapsule_SetName.argtypes = (ctypes.py_object, c_void_p)

    def error_text(self):
        """The library's last error message (process-wide)."""
        size = 512
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self.last_error(buf, size)
            if n < size:
                return buf.value.decode("utf-8", "replace")
            size = n + 1


_lock = threading.Lock()
_instance = None


def lib():
    """Loads the library on first use and returns the shared _Library."""
    global _instance
    if _instance is None:
        with _lock:
            if _instance is None:
                _instance = _Library(library_path())
    return _instance
