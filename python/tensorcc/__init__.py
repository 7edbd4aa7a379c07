"""tensorcc: tcc's tensor-core kernels from Python.

    import torch, tensorcc
    x = torch.randn(8, 64, 56, 56, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    w = torch.randn(128, 64, 3, 3, device="cuda", dtype=torch.half).to(memory_format=torch.channels_last)
    y = tensorcc.conv2d(x, w, padding=1)        # compiled for this shape once, then cached

compile_conv2d / compile_matmul compile from keyword arguments without a GPU (Kernel.ptx,
Kernel.params); Kernel.launch runs on device addresses and a CUstream; tensorcc.run,
conv2d and matmul take PyTorch tensors and use the current CUDA stream. The shared library
is found through TENSORCC_LIBRARY, inside the package, or the dynamic loader's path.
"""
from ._lib import Error
from ._kernel import Kernel, Param, compile_conv2d, compile_matmul, device_arch
from ._lib import lib as _c_library

__all__ = ["Error", "Kernel", "Param", "compile_conv2d", "compile_matmul", "device_arch", "conv2d",
           "matmul", "run", "register_custom_ops", "library_version", "__version__"]



def library_version():
    """The version of the libtensorcc this package loaded ("0.1.0")."""
    return _c_library.tcc_version_string().decode()


try:  # the installed package's version (python/pyproject.toml, which CMake checks)
    from importlib.metadata import version as _version
    __version__ = _version("tensorcc")
except Exception:  # imported from the source tree
    __version__ = library_version()


def _with_torch():
    """tensorcc._torch, imported when first needed: only these calls need PyTorch."""
    import importlib
    return importlib.import_module("._torch", __name__)


def run(kernel, *tensors, out=None):
    """Runs a Kernel on PyTorch tensors (in kernel.params' order) on the current stream."""
    return _with_torch().run(kernel, *tensors, out=out)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, **options):
    """torch.nn.functional.conv2d by a tensorcc kernel (options: out_dtype, relu)."""
    return _with_torch().conv2d(input, weight, bias, stride, padding, dilation, groups, **options)


def matmul(a, b, **options):
    """a @ b by a tensorcc kernel (options: out_dtype, relu)."""
    return _with_torch().matmul(a, b, **options)


def register_custom_ops():
    """torch.ops.tensorcc.conv2d for torch.compile graphs (PyTorch 2.4 or newer)."""
    return _with_torch().register_custom_ops()
