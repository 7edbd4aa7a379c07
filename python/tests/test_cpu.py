"""The package without a GPU: loading the library, compiling from keyword arguments, the
errors of bad arguments, and the checks of tensors (as plain values) against parameters."""
import os
import sys
import unittest

import tensorcc
from tensorcc import _params

SEED_LAYER = dict(batch=32, height=56, width=56, in_channels=64, out_channels=64, kernel_size=3,
                  padding=1)


class LibraryTest(unittest.TestCase):
    def test_versions_agree(self):
        self.assertEqual(tensorcc.__version__, tensorcc.library_version())

    def test_library_is_found_where_asked(self):
        loaded = tensorcc._lib.lib._name
        explicit = os.environ.get("TENSORCC_LIBRARY")
        if explicit:
            self.assertEqual(loaded, explicit)
        else:
            self.assertIn("libtensorcc.so", loaded)


class CompileTest(unittest.TestCase):
    def test_conv2d_nhwc_parameters(self):
        kernel = tensorcc.compile_conv2d(**SEED_LAYER, arch="sm_80")
        self.assertIn(".entry", kernel.ptx)
        self.assertIn(".target sm_80", kernel.ptx)
        self.assertEqual([p.name for p in kernel.params], ["input", "filter", "output"])
        inp, filt, out = kernel.params
        self.assertEqual((inp.layout, inp.shape, inp.dtype, inp.role),
                         ("NHWC", (32, 56, 56, 64), "float16", "input"))
        self.assertEqual((filt.layout, filt.shape), ("KRSC", (64, 3, 3, 64)))
        # The output type defaults to the input's, as PyTorch's conv2d does.
        self.assertEqual((out.layout, out.shape, out.dtype, out.role),
                         ("NHWC", (32, 56, 56, 64), "float16", "output"))
        self.assertEqual(out.bytes, 32 * 56 * 56 * 64 * 2)
        self.assertGreaterEqual(out.alignment, 1)

    def test_conv2d_nchw_bias_and_stride(self):
        kernel = tensorcc.compile_conv2d(batch=2, height=15, width=9, in_channels=24,
                                         out_channels=40, kernel_size=(3, 1), stride=2,
                                         padding=(1, 0), layout="nchw", bias=True,
                                         out_dtype="float32", arch="sm_80")
        names = [p.name for p in kernel.params]
        self.assertEqual(names, ["input", "filter", "bias", "output"])
        inp, filt, bias, out = kernel.params
        self.assertEqual((inp.layout, inp.shape), ("NCHW", (2, 24, 15, 9)))
        self.assertEqual((filt.layout, filt.shape), ("KCRS", (40, 24, 3, 1)))
        self.assertEqual((bias.layout, bias.shape, bias.dtype), ("vector", (40,), "float32"))
        self.assertEqual(out.shape, (2, 40, 8, 5))

    def test_beta_reads_the_output(self):
        kernel = tensorcc.compile_matmul(m=64, n=32, k=48, beta=1.0, dtype="bfloat16",
                                         out_dtype="float32", arch="sm_80")
        self.assertEqual(kernel.params[-1].role, "input_output")

    def test_matmul_column_major_and_batch(self):
        kernel = tensorcc.compile_matmul(m=128, n=64, k=32, batch=3, a_col_major=True,
                                         arch="sm_80")
        a, b, c = kernel.params
        self.assertEqual((a.name, a.layout, a.shape), ("A", "col_major", (3, 32, 128)))
        self.assertEqual((b.name, b.layout, b.shape), ("B", "row_major", (3, 32, 64)))
        self.assertEqual((c.name, c.shape), ("C", (3, 128, 64)))

    def test_sm_90a_and_a_given_schedule(self):
        kernel = tensorcc.compile_matmul(m=256, n=256, k=256, out_dtype="float32", arch="sm_90a")
        self.assertIn(".target sm_90a", kernel.ptx)
        kernel = tensorcc.compile_matmul(m=256, n=256, k=256, arch="sm_80",
                                         schedule={"stages": 2, "split_k": 1})
        self.assertIn("mma", kernel.ptx)
        self.assertIn("sm_80", repr(kernel))


class ErrorTest(unittest.TestCase):
    def assert_refused(self, message, status="TCC_ERROR_INVALID_ARGUMENT", **arguments):
        with self.assertRaises(tensorcc.Error) as caught:
            tensorcc.compile_conv2d(**dict(SEED_LAYER, **arguments))
        self.assertIn(message, str(caught.exception))
        self.assertEqual(caught.exception.status, status)
        self.assertNotIn("\n", str(caught.exception))

    def test_bad_sizes(self):
        self.assert_refused("batch", batch=0)
        self.assert_refused("groups", groups=5)

    def test_bad_names(self):
        self.assert_refused("float64", dtype="float64")
        self.assert_refused("layout", layout="nwhc")
        self.assert_refused("sm_99", arch="sm_99")
        self.assert_refused("padding", padding=(1, 2, 3))
        self.assert_refused("kernel_size", kernel_size="3")

    def test_bad_schedule(self):
        self.assert_refused("no field 'stage'", schedule={"stage": 3})
        self.assert_refused("stages", schedule={"stages": 99}, arch="sm_80")

    def test_launch_with_wrong_count(self):
        kernel = tensorcc.compile_matmul(m=16, n=16, k=16, arch="sm_80")
        with self.assertRaises(tensorcc.Error) as caught:
            kernel.launch([0x1000, 0x2000])
        self.assertIn("takes 3 device addresses (A, B, C), got 2", str(caught.exception))


class ParameterCheckTest(unittest.TestCase):
    """tensorcc._params.check on what PyTorch would report for a tensor."""

    @classmethod
    def setUpClass(cls):
        cls.conv = tensorcc.compile_conv2d(batch=2, height=8, width=8, in_channels=16,
                                           out_channels=32, kernel_size=3, padding=1,
                                           arch="sm_80")
        cls.matmul = tensorcc.compile_matmul(m=32, n=16, k=64, a_col_major=True, arch="sm_80")

    def check(self, param, shape, strides, dtype="float16", address=0x7000000000,
              device="cuda:0"):
        _params.check(param, shape, strides, dtype, address, device, "cuda:0")

    def refused(self, message, *args, **kwargs):
        with self.assertRaises(tensorcc.Error) as caught:
            self.check(*args, **kwargs)
        self.assertIn(message, str(caught.exception))

    def test_channels_last_is_accepted(self):
        inp, filt, out = self.conv.params
        # torch.empty(2, 16, 8, 8).to(memory_format=torch.channels_last).stride()
        self.check(inp, (2, 16, 8, 8), (1024, 1, 128, 16))
        self.check(filt, (32, 16, 3, 3), (144, 1, 48, 16))

    def test_contiguous_nchw_is_refused_for_nhwc(self):
        inp = self.conv.params[0]
        self.refused("expected a float16 tensor of shape [2, 16, 8, 8] channels_last (NHWC)",
                     inp, (2, 16, 8, 8), (1024, 64, 8, 1))

    def test_shape_type_device_alignment(self):
        inp = self.conv.params[0]
        self.refused("input: expected a float16", inp, (2, 16, 8, 9), (1152, 1, 144, 16))
        self.refused("input: expected float16, got float32", inp, (2, 16, 8, 8),
                     (1024, 1, 128, 16), dtype="float32")
        self.refused("on cuda:1", inp, (2, 16, 8, 8), (1024, 1, 128, 16), device="cuda:1")
        self.refused("not %d-byte aligned" % inp.alignment, inp, (2, 16, 8, 8),
                     (1024, 1, 128, 16), address=0x7000000002)

    def test_matmul_layouts(self):
        a, b, c = self.matmul.params
        self.check(a, (32, 64), (1, 32))         # torch.empty(64, 32).t()
        self.check(a, (1, 32, 64), (2048, 1, 32))
        self.refused("column-major", a, (32, 64), (64, 1))
        self.check(b, (64, 16), (16, 1))
        self.check(c, (32, 16), (16, 1), dtype="float16")


if __name__ == "__main__":
    sys.exit(unittest.main())
