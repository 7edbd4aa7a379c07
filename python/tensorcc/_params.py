"""Whether a tensor, described by plain values (shape and strides as PyTorch gives them, a
type name, an address, a device), can be a kernel parameter: pure Python, so it is tested
without PyTorch or a GPU. tensorcc._torch calls it with a tensor's values."""
from ._lib import Error

# How a tensor as PyTorch shapes it maps onto a parameter's dense memory order: the
# permutation of its dimensions. A channels_last activation (N, C, H, W) is NHWC in memory;
# a channels_last weight (K, C, R, S) is KRSC.
PERMUTATIONS = {"NHWC": (0, 2, 3, 1), "KRSC": (0, 2, 3, 1)}


def memory_order(shape, strides, param):
    """The tensor's (shape, strides) in param's memory order, or None if the ranks differ."""
    shape, strides = list(shape), list(strides)
    if param.layout in PERMUTATIONS:
        if len(shape) != 4:
            return None
        order = PERMUTATIONS[param.layout]
        shape, strides = [shape[i] for i in order], [strides[i] for i in order]
    elif param.layout in ("row_major", "col_major"):
        if param.layout == "col_major" and len(shape) >= 2:
            shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
        if len(shape) == len(param.shape) - 1:  # a product of batch 1, given as a matrix
            shape, strides = [1] + shape, [0] + strides
    if len(shape) != len(param.shape):
        return None
    return shape, strides


def is_dense(shape, strides):
    """C order without gaps (a dimension of size 1 may have any stride, as in PyTorch)."""
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def torch_shape(param):
    """How PyTorch would shape a tensor for `param`, and its memory format, for messages."""
    shape = list(param.shape)
    if param.layout in PERMUTATIONS:
        n, a, b, c = shape
        return "%s channels_last" % [n, c, a, b]
    if param.layout == "col_major":
        return "%s column-major (its transpose contiguous)" % (shape[:-2] + shape[:-3:-1])
    return "%s contiguous" % shape


def check(param, shape, strides, dtype, address, device, kernel_device):
    """Raises Error, naming the parameter, unless the values describe a usable tensor."""
    if device != kernel_device:
        raise Error("%s: the tensor is on %s; the kernel runs on %s"
                    % (param.name, device, kernel_device))
    if dtype != param.dtype:
        raise Error("%s: expected %s, got %s" % (param.name, param.dtype, dtype))
    order = memory_order(shape, strides, param)
    if order is None or order[0] != list(param.shape) or not is_dense(*order):
        raise Error("%s: expected a %s tensor of shape %s (%s), got shape %s with strides %s"
                    % (param.name, param.dtype, torch_shape(param), param.layout, list(shape),
                       list(strides)))
    if address % param.alignment:
        raise Error("%s: the data at 0x%x is not %d-byte aligned (a view at an offset?)"
                    % (param.name, address, param.alignment))
