"""Compiling a conv2d or matmul from keyword arguments, and a compiled kernel's parameters,
code and launches on device addresses. Nothing here needs PyTorch or a GPU until a launch."""
import collections
import ctypes
import threading

from . import _lib
from ._lib import lib

# One lock around every call that touches a tensorcc context: a context is used by one
# thread at a time (tcc/tcc.h), and compiles are short next to what they save.
_lock = threading.RLock()
_compile_context = None
_devices = {}

Param = collections.namedtuple(
    "Param", "name role dtype layout shape elements bytes alignment")
Param.__doc__ = """One kernel parameter (tcc_kernel_param): its memory is dense in `shape`'s
order, which `layout` names ("NHWC", "NCHW", "KRSC", "KCRS", "row_major", "col_major",
"vector", ...)."""


def _context():
    global _compile_context
    if _compile_context is None:
        handle = ctypes.c_void_p()
        if lib.tcc_context_create(ctypes.byref(handle)) != 0:
            raise MemoryError("tensorcc: cannot create a context")
        _compile_context = handle
    return _compile_context


def _dtype_value(dtype, what):
    name = getattr(dtype, "__str__", None) and str(dtype).replace("torch.", "")
    name = {"half": "float16", "float": "float32"}.get(name, name)
    if name not in _lib.DTYPES:
        raise _lib.Error("%s: %r is not a type tensorcc knows (%s)"
                         % (what, dtype, ", ".join(sorted(_lib.DTYPES))))
    return _lib.DTYPES[name]


def _pair(value, what):
    if isinstance(value, int):
        return value, value
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(
            isinstance(v, int) for v in value):
        return tuple(value)
    raise _lib.Error("%s: expected an int or a pair of ints, got %r" % (what, value))


def _padding(value):
    """PyTorch's padding (int or (h, w)) or per side (top, bottom, left, right)."""
    if isinstance(value, (tuple, list)) and len(value) == 4 and all(
            isinstance(v, int) for v in value):
        return tuple(value)
    h, w = _pair(value, "padding")
    return h, h, w, w


def _choice(table, value, what):
    key = str(value).lower()
    if key not in table:
        raise _lib.Error("%s: %r is not one of %s" % (what, value, ", ".join(sorted(table))))
    return table[key]


def _schedule(fields):
    if fields is None:
        return None
    schedule = _lib.new_struct(_lib.GemmSchedule, "tcc_gemm_schedule_init")
    known = {name for name, _ in _lib.GemmSchedule._fields_ if name != "size"}
    for name, value in fields.items():
        if name not in known:
            raise _lib.Error("schedule: no field %r (fields: %s)" % (name, ", ".join(sorted(known))))
        setattr(schedule, name, value)
    return ctypes.byref(schedule)


def _build_options(arch):
    options = _lib.new_struct(_lib.BuildOptions, "tcc_build_options_init")
    if arch is not None:
        value = ctypes.c_int()
        with _lock:
            context = _context()
            _lib.check(context, lib.tcc_arch_parse(context, str(arch).encode(), ctypes.byref(value)))
        options.arch = value.value
    return options


def _types_and_epilogue(desc, dtype, out_dtype, alpha, beta, bias, residual, relu, clamp):
    """The fields conv2d's and matmul's descriptors share: types and the fused epilogue."""
    desc.input_type = _dtype_value(dtype, "dtype")
    desc.accumulate_type = _accumulate(desc.input_type)
    desc.output_type = (_default_output(desc.input_type) if out_dtype is None
                        else _dtype_value(out_dtype, "out_dtype"))
    epilogue = desc.epilogue
    epilogue.alpha = float(alpha)
    epilogue.beta = float(beta)
    epilogue.bias = bool(bias)
    epilogue.residual = bool(residual)
    epilogue.relu = bool(relu)
    if clamp is not None:
        epilogue.clamp = True
        epilogue.clamp_min, epilogue.clamp_max = (float(v) for v in clamp)


def _default_output(input_type):
    """PyTorch's rule for the output type: that of the input, but int32 for int8 (and
    float32 for float32, which the tensor cores read as tf32)."""
    return _lib.DTYPES["int32"] if input_type == _lib.DTYPES["int8"] else input_type


def _accumulate(input_type):
    return _lib.DTYPES["int32"] if input_type == _lib.DTYPES["int8"] else _lib.DTYPES["float32"]


def compile_conv2d(*, batch, height, width, in_channels, out_channels, kernel_size,
                   stride=1, padding=0, dilation=1, groups=1, dtype="float16", out_dtype=None,
                   layout="nhwc", filter_layout=None, bias=False, residual=False, alpha=1.0,
                   beta=0.0, relu=False, clamp=None, arch=None, schedule=None):
    """Compiles a 2-D convolution. Sizes as torch.nn.Conv2d takes them; padding also per
    side (top, bottom, left, right); layout "nhwc" (channels_last) or "nchw"; the filter
    "krsc" (channels_last weight) or "kcrs" (PyTorch's contiguous weight), by default the
    one matching the layout. arch: "sm_80", "sm_90a", ... (default: the library's, sm_80).
    schedule: a dict of tcc_gemm_schedule fields (zero: chosen)."""
    desc = _lib.new_struct(_lib.Conv2dDesc, "tcc_conv2d_desc_init")
    desc.batch, desc.height, desc.width = batch, height, width
    desc.in_channels, desc.out_channels, desc.groups = in_channels, out_channels, groups
    desc.kernel_h, desc.kernel_w = _pair(kernel_size, "kernel_size")
    desc.stride_h, desc.stride_w = _pair(stride, "stride")
    desc.dilation_h, desc.dilation_w = _pair(dilation, "dilation")
    desc.pad_top, desc.pad_bottom, desc.pad_left, desc.pad_right = _padding(padding)
    desc.layout = _choice(_lib.LAYOUTS, layout, "layout")
    if filter_layout is None:
        filter_layout = {"nhwc": "krsc", "nchw": "kcrs", "nhwcnc": "blocked"}[str(layout).lower()]
    desc.filter_layout = _choice(_lib.FILTER_LAYOUTS, filter_layout, "filter_layout")
    _types_and_epilogue(desc, dtype, out_dtype, alpha, beta, bias, residual, relu, clamp)
    return _compile("tcc_conv2d_compile", desc, schedule, arch,
                    lib.tcc_conv2d_flops(ctypes.byref(desc)))


def compile_matmul(*, m, n, k, batch=1, a_col_major=False, b_col_major=False, dtype="float16",
                   out_dtype=None, bias=False, residual=False, alpha=1.0, beta=0.0, relu=False,
                   clamp=None, arch=None, schedule=None):
    """Compiles C = A @ B (batch of them): A m x k, B k x n, C m x n row-major."""
    desc = _lib.new_struct(_lib.MatmulDesc, "tcc_matmul_desc_init")
    desc.batch, desc.m, desc.n, desc.k = batch, m, n, k
    desc.a_col_major, desc.b_col_major = bool(a_col_major), bool(b_col_major)
    _types_and_epilogue(desc, dtype, out_dtype, alpha, beta, bias, residual, relu, clamp)
    return _compile("tcc_matmul_compile", desc, schedule, arch,
                    lib.tcc_matmul_flops(ctypes.byref(desc)))


def _compile(function, desc, schedule, arch, flops):
    options = _build_options(arch)
    handle = ctypes.c_void_p()
    with _lock:
        context = _context()
        status = getattr(lib, function)(context, ctypes.byref(desc), _schedule(schedule),
                                        ctypes.byref(options), ctypes.byref(handle))
        _lib.check(context, status)
    return Kernel(handle, flops, options.arch)


class Kernel:
    """A compiled kernel: its code (ptx, llvm_ir, loop_ir), its parameters (params, in launch
    order), and launches on device addresses (launch) or, with tensorcc.torch, on tensors."""

    def __init__(self, handle, flops, arch):
        self._handle = handle
        self._loaded = {}
        self.flops = flops
        self.arch = _lib.text(lib.tcc_arch_name(arch))
        self.params = tuple(self._param(i) for i in range(lib.tcc_kernel_param_count(handle)))
        self.workspace_bytes = tuple(
            lib.tcc_kernel_workspace_bytes(handle, i)
            for i in range(lib.tcc_kernel_workspace_count(handle)))

    def _param(self, index):
        info = _lib.new_struct(_lib.KernelParamInfo)
        if not lib.tcc_kernel_param(self._handle, index, ctypes.byref(info)):
            raise _lib.Error("kernel parameter %d: not available" % index)
        return Param(_lib.text(info.name), _lib.ROLE_NAMES.get(info.role, "unknown"),
                     _lib.DTYPE_NAMES.get(info.dtype, "void"), _lib.text(info.layout),
                     tuple(info.shape[:info.rank]), info.elements, info.bytes, info.alignment)

    @property
    def name(self):
        return _lib.text(lib.tcc_kernel_name(self._handle))

    @property
    def ptx(self):
        return _lib.text(lib.tcc_kernel_ptx(self._handle))

    @property
    def llvm_ir(self):
        return _lib.text(lib.tcc_kernel_llvm_ir(self._handle))

    @property
    def loop_ir(self):
        return _lib.text(lib.tcc_kernel_loop_ir(self._handle))

    def __repr__(self):
        return "<tensorcc.Kernel %s for %s: %s>" % (
            self.name, self.arch, ", ".join("%s%s" % (p.name, list(p.shape)) for p in self.params))

    def _loaded_on(self, ordinal):
        """The kernel loaded on device `ordinal` (its module, workspaces), once per device."""
        if ordinal not in self._loaded:
            device = _device(ordinal)
            loaded = ctypes.c_void_p()
            _lib.check(lib.tcc_device_context(device),
                       lib.tcc_kernel_load(device, self._handle, ctypes.byref(loaded)))
            self._loaded[ordinal] = loaded
        return self._loaded[ordinal]

    def launch(self, pointers, device=0, stream=0, workspaces=None):
        """Enqueues the kernel on `stream` (a CUstream as an int; 0 = the legacy default
        stream) of device `device`, without waiting: pointers[i] is the device address of
        params[i]; workspaces, if given, one address per workspace_bytes entry (else the
        loaded kernel's own, which two overlapping launches must not share)."""
        if len(pointers) != len(self.params):
            raise _lib.Error("%s takes %d device addresses (%s), got %d" % (
                self.name, len(self.params), ", ".join(p.name for p in self.params), len(pointers)))
        addresses = (ctypes.c_uint64 * max(1, len(pointers)))(*pointers)
        spaces = list(workspaces or [])
        workspace_array = (ctypes.c_uint64 * max(1, len(spaces)))(*spaces)
        with _lock:
            loaded = self._loaded_on(device)
            status = lib.tcc_kernel_launch_async_with_workspaces(
                loaded, len(pointers), addresses, len(spaces),
                workspace_array if spaces else None, ctypes.c_void_p(stream or None))
            _lib.check(lib.tcc_device_context(_device(device)), status)

    def close(self):
        """Releases the kernel and what it loaded on devices (also done when collected)."""
        with _lock:
            for loaded in self._loaded.values():
                lib.tcc_loaded_kernel_destroy(loaded)
            self._loaded = {}
            if self._handle:
                lib.tcc_kernel_destroy(self._handle)
                self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass


def _device(ordinal):
    """Device `ordinal` opened through tensorcc (its primary context, shared with PyTorch)."""
    with _lock:
        if ordinal not in _devices:
            context = ctypes.c_void_p()
            if lib.tcc_context_create(ctypes.byref(context)) != 0:
                raise MemoryError("tensorcc: cannot create a context")
            device = ctypes.c_void_p()
            status = lib.tcc_device_open(context, int(ordinal), ctypes.byref(device))
            if status != 0:
                message = _lib.text(lib.tcc_last_error(context))
                lib.tcc_context_destroy(context)
                raise _lib.Error(message, _lib.text(lib.tcc_status_string(status)))
            _devices[ordinal] = (device, context)
        return _devices[ordinal][0]


def device_arch(ordinal=0):
    """The arch tensorcc compiles for on device `ordinal` ("sm_90a" on an H100)."""
    device = _device(ordinal)
    return _lib.text(lib.tcc_arch_name(lib.tcc_arch_for_device(lib.tcc_device_arch(device))))
