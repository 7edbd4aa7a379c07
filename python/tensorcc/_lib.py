"""The C library through ctypes: finding libtensorcc, and its types and functions.

The structs here mirror include/tcc/*.h field for field. Each one that may grow starts with
its size in bytes, which the library checks, so a package and a library of different
versions fail with a message instead of reading fields at the wrong offsets.
"""
import ctypes
import ctypes.util
import os

_LIBRARY_NAME = "libtensorcc.so.0"


class Error(RuntimeError):
    """A failed call into tensorcc: the library's one-line message, and its status name."""

    def __init__(self, message, status="TCC_ERROR_INVALID_ARGUMENT"):
        super().__init__(message)
        self.status = status


def _candidates():
    """Where libtensorcc may be, most specific first."""
    explicit = os.environ.get("TENSORCC_LIBRARY")
    if explicit:
        yield explicit
        return
    here = os.path.dirname(os.path.abspath(__file__))
    # A wheel or `pip install` from the build carries the library inside the package.
    yield os.path.join(here, "lib", _LIBRARY_NAME)
    found = ctypes.util.find_library("tensorcc")
    if found:
        yield found
    # The dynamic loader's own search (LD_LIBRARY_PATH, the ld.so cache, the default dirs).
    yield _LIBRARY_NAME


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path)
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as error:
            tried.append("%s (%s)" % (path, error))
    raise ImportError("tensorcc: cannot load %s; set TENSORCC_LIBRARY to its path (tried: %s)"
                      % (_LIBRARY_NAME, "; ".join(tried)))


lib = _load()

# ---- enums (values as in the headers) ----------------------------------------------------

DTYPES = {"bool": 1, "int8": 2, "int32": 3, "float16": 4, "bfloat16": 5, "float32": 6}
DTYPE_NAMES = {value: name for name, value in DTYPES.items()}
LAYOUTS = {"nhwc": 0, "nchw": 1, "nhwcnc": 2}
FILTER_LAYOUTS = {"krsc": 0, "kcrs": 1, "blocked": 2}

# ---- structs -----------------------------------------------------------------------------

c_int64 = ctypes.c_int64
c_int = ctypes.c_int
c_bool = ctypes.c_bool
c_double = ctypes.c_double


class Epilogue(ctypes.Structure):
    _fields_ = [("alpha", c_double), ("beta", c_double), ("bias", c_bool),
                ("residual", c_bool), ("relu", c_bool), ("clamp", c_bool),
                ("clamp_min", c_double), ("clamp_max", c_double), ("prologue", c_int),
                ("prologue_arg", c_double)]


class Conv2dDesc(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t)] + [
        (name, c_int64) for name in (
            "batch", "height", "width", "in_channels", "out_channels", "kernel_h", "kernel_w",
            "stride_h", "stride_w", "pad_top", "pad_bottom", "pad_left", "pad_right",
            "dilation_h", "dilation_w", "groups")
    ] + [("layout", c_int), ("filter_layout", c_int), ("input_type", c_int),
         ("accumulate_type", c_int), ("output_type", c_int), ("epilogue", Epilogue)]


class MatmulDesc(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("batch", c_int64), ("m", c_int64), ("n", c_int64),
                ("k", c_int64), ("a_col_major", c_bool), ("b_col_major", c_bool),
                ("input_type", c_int), ("accumulate_type", c_int), ("output_type", c_int),
                ("epilogue", Epilogue)]


class BuildOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("arch", c_int), ("auto_unroll_max_step", c_int),
                ("print_after_pass", ctypes.c_char_p), ("print_callback", ctypes.c_void_p),
                ("print_user", ctypes.c_void_p), ("machine_code", c_bool),
                ("reserved", ctypes.c_char * 7), ("multiprocessors", c_int)]


class GemmSchedule(ctypes.Structure):
    """tcc_gemm_schedule: zero fields are chosen from the shape."""
    _fields_ = [("size", ctypes.c_size_t)] + [
        (name, c_int) for name in (
            "mma_m", "mma_n", "mma_k", "block_row_warps", "block_col_warps", "warp_row_tiles",
            "warp_col_tiles", "num_total_passes", "num_fused_passes", "policy")
    ] + [("column_major_blocks", c_bool)] + [
        (name, c_int) for name in (
            "stages", "smem_layout", "intrinsic", "split_k", "wgmma_steps", "copy", "producer",
            "store", "grid", "grid_blocks", "cluster", "consumers")
    ]


PARAM_MAX_RANK = 8


class KernelParamInfo(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("name", ctypes.c_char_p), ("role", c_int),
                ("dtype", c_int), ("layout", ctypes.c_char_p), ("rank", c_int),
                ("shape", c_int64 * PARAM_MAX_RANK), ("elements", c_int64), ("bytes", c_int64),
                ("alignment", c_int)]


ROLE_NAMES = {0: "input", 1: "output", 2: "input_output"}

# ---- functions ---------------------------------------------------------------------------

_p = ctypes.c_void_p
_status = c_int


def _declare(name, restype, *argtypes):
    function = getattr(lib, name)
    function.restype = restype
    function.argtypes = list(argtypes)


_declare("tcc_version_string", ctypes.c_char_p)
_declare("tcc_status_string", ctypes.c_char_p, _status)
_declare("tcc_context_create", _status, ctypes.POINTER(_p))
_declare("tcc_context_destroy", None, _p)
_declare("tcc_last_error", ctypes.c_char_p, _p)
_declare("tcc_arch_name", ctypes.c_char_p, c_int)
_declare("tcc_arch_parse", _status, _p, ctypes.c_char_p, ctypes.POINTER(c_int))
_declare("tcc_arch_for_device", c_int, c_int)
# The _init_size functions: the C headers' _init macros, which write as far as the caller's
# struct reaches (tcc/tcc.h, "ABI").
_declare("tcc_conv2d_desc_init_size", None, ctypes.POINTER(Conv2dDesc), ctypes.c_size_t)
_declare("tcc_matmul_desc_init_size", None, ctypes.POINTER(MatmulDesc), ctypes.c_size_t)
_declare("tcc_build_options_init_size", None, ctypes.POINTER(BuildOptions), ctypes.c_size_t)
_declare("tcc_gemm_schedule_init_size", None, ctypes.POINTER(GemmSchedule), ctypes.c_size_t)
_declare("tcc_conv2d_compile", _status, _p, ctypes.POINTER(Conv2dDesc),
         ctypes.POINTER(GemmSchedule), ctypes.POINTER(BuildOptions), ctypes.POINTER(_p))
_declare("tcc_matmul_compile", _status, _p, ctypes.POINTER(MatmulDesc),
         ctypes.POINTER(GemmSchedule), ctypes.POINTER(BuildOptions), ctypes.POINTER(_p))
_declare("tcc_conv2d_flops", c_double, ctypes.POINTER(Conv2dDesc))
_declare("tcc_matmul_flops", c_double, ctypes.POINTER(MatmulDesc))
_declare("tcc_kernel_destroy", None, _p)
_declare("tcc_kernel_name", ctypes.c_char_p, _p)
_declare("tcc_kernel_ptx", ctypes.c_char_p, _p)
_declare("tcc_kernel_loop_ir", ctypes.c_char_p, _p)
_declare("tcc_kernel_llvm_ir", ctypes.c_char_p, _p)
_declare("tcc_kernel_launch_count", c_int, _p)
_declare("tcc_kernel_workspace_count", c_int, _p)
_declare("tcc_kernel_workspace_bytes", c_int64, _p, c_int)
_declare("tcc_kernel_param_count", c_int, _p)
_declare("tcc_kernel_param", c_bool, _p, c_int, ctypes.POINTER(KernelParamInfo))
_declare("tcc_device_open", _status, _p, c_int, ctypes.POINTER(_p))
_declare("tcc_device_close", None, _p)
_declare("tcc_device_context", _p, _p)
_declare("tcc_device_arch", c_int, _p)
_declare("tcc_device_name", ctypes.c_char_p, _p)
_declare("tcc_kernel_load", _status, _p, _p, ctypes.POINTER(_p))
_declare("tcc_loaded_kernel_destroy", None, _p)
_declare("tcc_kernel_launch_async_with_workspaces", _status, _p, c_int,
         ctypes.POINTER(ctypes.c_uint64), c_int, ctypes.POINTER(ctypes.c_uint64), _p)


def text(pointer):
    """A C string the library returned, as str ("" for NULL)."""
    return pointer.decode("utf-8", "replace") if pointer else ""


def check(context, status):
    """Raises Error with the context's last message unless status is TCC_OK."""
    if status != 0:
        raise Error(text(lib.tcc_last_error(context)) or "tensorcc call failed",
                    text(lib.tcc_status_string(status)))


def new_struct(cls, init=None):
    """A struct with its size set, filled with the library's defaults when it has an init."""
    value = cls()
    if init is not None:
        getattr(lib, init + "_size")(ctypes.byref(value), ctypes.sizeof(cls))
    value.size = ctypes.sizeof(cls)
    return value
