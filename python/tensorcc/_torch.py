"""tensorcc on PyTorch tensors: a kernel's parameters checked against tensors (device, dtype,
shape, memory layout, alignment), launches on the current CUDA stream, the functional
conv2d and matmul, and an optional torch.library custom op for torch.compile."""
import threading
from typing import List, Optional

import torch

from . import _kernel, _lib, _params

_DTYPES = {torch.float16: "float16", torch.bfloat16: "bfloat16", torch.float32: "float32",
           torch.int8: "int8", torch.int32: "int32"}
_TORCH_DTYPES = {name: dtype for dtype, name in _DTYPES.items()}

def check_tensor(tensor, param, device):
    """Raises tensorcc.Error unless `tensor` can be parameter `param` on cuda:`device`."""
    if not isinstance(tensor, torch.Tensor):
        raise _lib.Error("%s: expected a torch.Tensor, got %s" % (param.name, type(tensor).__name__))
    _params.check(param, tensor.shape, tensor.stride(), _DTYPES.get(tensor.dtype, str(tensor.dtype)),
                  tensor.data_ptr(), str(tensor.device), "cuda:%d" % device)


def _empty_like_param(param, device):
    """A fresh tensor for an output parameter, shaped as PyTorch would shape it."""
    dtype = _TORCH_DTYPES[param.dtype]
    if param.layout in _params.PERMUTATIONS:
        n, h, w, c = param.shape
        return torch.empty((n, c, h, w), dtype=dtype, device=device,
                           memory_format=torch.channels_last)
    return torch.empty(param.shape, dtype=dtype, device=device)


def run(kernel, *tensors, out=None):
    """Runs `kernel` on tensors given in the order of kernel.params (the output last, or
    allocated when out is None and only the output is missing), on the current CUDA stream
    of their device; returns the output tensor. Nothing is synchronized."""
    params = kernel.params
    given = list(tensors) + ([out] if out is not None else [])
    if len(given) == len(params) - 1 and params[-1].role == "output":
        device = given[0].device if given and isinstance(given[0], torch.Tensor) else None
        if device is None or device.type != "cuda":
            raise _lib.Error("%s: the first tensor must be on a CUDA device" % kernel.name)
        given.append(_empty_like_param(params[-1], device))
    if len(given) != len(params):
        raise _lib.Error("%s takes %d tensors (%s), got %d" % (
            kernel.name, len(params), ", ".join(p.name for p in params), len(given)))
    ordinal = given[0].device.index if given[0].device.index is not None else 0
    for tensor, param in zip(given, params):
        check_tensor(tensor, param, ordinal)
    workspaces = [torch.empty(max(1, n), dtype=torch.uint8, device=given[0].device)
                  for n in kernel.workspace_bytes]
    stream = torch.cuda.current_stream(given[0].device)
    kernel.launch([t.data_ptr() for t in given], device=ordinal, stream=stream.cuda_stream,
                  workspaces=[w.data_ptr() for w in workspaces])
    # The workspaces go back to PyTorch's caching allocator, which reuses them only for work
    # on this stream, queued after the kernel.
    return given[-1]


# ---- the functional ops: compiled once per shape, like cudnn.benchmark's plans ---------------

_cache = {}
_cache_lock = threading.Lock()


def _cached(key, build):
    with _cache_lock:
        kernel = _cache.get(key)
    if kernel is None:
        kernel = build()
        with _cache_lock:
            kernel = _cache.setdefault(key, kernel)
    return kernel


def _arch(device):
    return _kernel.device_arch(device.index if device.index is not None else 0)


def _conv_layout(input, weight):
    if input.dim() != 4 or weight.dim() != 4:
        raise _lib.Error("conv2d: expected 4-D input and weight, got %d-D and %d-D"
                         % (input.dim(), weight.dim()))
    channels_last = input.is_contiguous(memory_format=torch.channels_last)
    if channels_last:
        layout = "nhwc"
    elif input.is_contiguous():
        layout = "nchw"
    else:
        raise _lib.Error("conv2d: the input is neither contiguous nor channels_last: call "
                         ".contiguous() or .to(memory_format=torch.channels_last)")
    weight_last = weight.is_contiguous(memory_format=torch.channels_last)
    filter_layout = "krsc" if weight_last and (layout == "nhwc" or not weight.is_contiguous()) \
        else "kcrs"
    return layout, filter_layout


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, *,
           out_dtype=None, relu=False):
    """torch.nn.functional.conv2d computed by a tensorcc kernel, compiled for the shape the
    first time it is met: input (N, C, H, W) channels_last (NHWC) or contiguous (NCHW),
    weight (K, C/groups, R, S) likewise; the output in the input's memory format, of
    out_dtype (default the input's; int32 for int8). bias (K,) is cast to the output type."""
    layout, filter_layout = _conv_layout(input, weight)
    # PyTorch takes lists as well as tuples; the cache's key needs them hashable.
    stride, padding, dilation = (tuple(v) if isinstance(v, list) else v
                                 for v in (stride, padding, dilation))
    n, c, h, w = input.shape
    k, _, r, s = weight.shape
    out_type = _DTYPES.get(out_dtype, out_dtype) if out_dtype is not None else None
    key = ("conv2d", tuple(input.shape), tuple(weight.shape), input.dtype, out_type, layout,
           filter_layout, bias is not None, stride, padding, dilation, groups, relu, input.device)
    kernel = _cached(key, lambda: _kernel.compile_conv2d(
        batch=n, height=h, width=w, in_channels=c, out_channels=k, kernel_size=(r, s),
        stride=stride, padding=padding, dilation=dilation, groups=groups,
        dtype=_DTYPES.get(input.dtype, input.dtype), out_dtype=out_type, layout=layout,
        filter_layout=filter_layout, bias=bias is not None, relu=relu,
        arch=_arch(input.device)))
    tensors = [input, weight]
    if bias is not None:
        tensors.append(bias.to(_TORCH_DTYPES[kernel.params[2].dtype]).contiguous())
    return run(kernel, *tensors)


def matmul(a, b, *, out_dtype=None, relu=False):
    """a @ b by a tensorcc kernel: a (m, k) or (batch, m, k), b (k, n) or (batch, k, n), each
    row-major (contiguous) or column-major (its transpose contiguous); the result row-major."""
    if a.dim() not in (2, 3) or a.dim() != b.dim():
        raise _lib.Error("matmul: expected two 2-D or two 3-D tensors, got %d-D and %d-D"
                         % (a.dim(), b.dim()))
    batch = a.shape[0] if a.dim() == 3 else 1
    m, k = a.shape[-2:]
    n = b.shape[-1]
    out_type = _DTYPES.get(out_dtype, out_dtype) if out_dtype is not None else None
    a_col = not a.is_contiguous() and a.transpose(-2, -1).is_contiguous()
    b_col = not b.is_contiguous() and b.transpose(-2, -1).is_contiguous()
    key = ("matmul", tuple(a.shape), tuple(b.shape), a.dtype, out_type, a_col, b_col, relu,
           a.device)
    kernel = _cached(key, lambda: _kernel.compile_matmul(
        m=m, n=n, k=k, batch=batch, a_col_major=a_col, b_col_major=b_col,
        dtype=_DTYPES.get(a.dtype, a.dtype), out_dtype=out_type, relu=relu,
        arch=_arch(a.device)))
    out = run(kernel, a, b)
    return out if a.dim() == 3 else out.squeeze(0)


# ---- torch.library: a custom op that torch.compile graphs can call ---------------------------

_registered = None


def register_custom_ops():
    """Registers torch.ops.tensorcc.conv2d(input, weight, bias, stride, padding, dilation,
    groups) (torch >= 2.4), with a fake implementation for torch.compile's tracing."""
    global _registered
    if _registered is not None:
        return _registered
    if not hasattr(torch, "library") or not hasattr(torch.library, "custom_op"):
        raise _lib.Error("tensorcc custom ops need torch.library.custom_op (PyTorch 2.4 or "
                         "newer); this is PyTorch %s" % torch.__version__)

    @torch.library.custom_op("tensorcc::conv2d", mutates_args=())
    def conv2d_op(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                  stride: List[int], padding: List[int], dilation: List[int],
                  groups: int) -> torch.Tensor:
        return conv2d(input, weight, bias, tuple(stride), tuple(padding), tuple(dilation), groups)

    @conv2d_op.register_fake
    def _(input, weight, bias, stride, padding, dilation, groups):
        n, _, h, w = input.shape
        k, _, r, s = weight.shape
        pad = list(padding) if len(padding) == 4 else [padding[0]] * 2 + [padding[1]] * 2
        p = (h + pad[0] + pad[1] - dilation[0] * (r - 1) - 1) // stride[0] + 1
        q = (w + pad[2] + pad[3] - dilation[1] * (s - 1) - 1) // stride[1] + 1
        fmt = torch.channels_last if input.is_contiguous(memory_format=torch.channels_last) \
            else torch.contiguous_format
        dtype = torch.int32 if input.dtype == torch.int8 else input.dtype
        return torch.empty((n, k, p, q), dtype=dtype, device=input.device, memory_format=fmt)

    _registered = conv2d_op
    return conv2d_op
