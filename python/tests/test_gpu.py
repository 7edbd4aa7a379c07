"""tensorcc on PyTorch tensors on a GPU, against PyTorch's own conv2d and matmul computed in
float64 from the same inputs. Skipped without PyTorch or a CUDA device."""
import sys
import unittest

try:
    import torch
    import torch.nn.functional as F
    HAVE_GPU = torch.cuda.is_available()
except ImportError:
    HAVE_GPU = False

import tensorcc

# (N, C, H, W, K, R, stride, padding, groups): the seed layer, a strided 1x1, a 7x7 stem with
# few channels, a ragged layer, a depthwise one.
LAYERS = [(32, 64, 56, 56, 64, 3, 1, 1, 1),
          (8, 256, 28, 28, 512, 1, 2, 0, 1),
          (4, 3, 64, 64, 64, 7, 2, 3, 1),
          (3, 37, 13, 11, 70, 3, 1, (1, 2), 1),
          (2, 64, 20, 20, 64, 3, 1, 1, 64)]


def max_error(got, want):
    """max |got - want| / max |want|, as tcc's own checks measure it."""
    return ((got.double() - want).abs().max() / want.abs().max()).item()


@unittest.skipUnless(HAVE_GPU, "needs PyTorch and a CUDA device")
class TorchTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(20261125)

    def test_conv2d_layers(self):
        for layout in (torch.channels_last, torch.contiguous_format):
            for n, c, h, w, k, r, stride, padding, groups in LAYERS:
                with self.subTest(layer=(n, c, h, w, k, r, stride, padding, groups),
                                  layout=layout):
                    x = torch.randn(n, c, h, w, device="cuda", dtype=torch.half)
                    weight = torch.randn(k, c // groups, r, r, device="cuda", dtype=torch.half)
                    x, weight = (t.to(memory_format=layout) for t in (x, weight))
                    bias = torch.randn(k, device="cuda", dtype=torch.half)
                    got = tensorcc.conv2d(x, weight, bias, stride=stride, padding=padding,
                                          groups=groups, out_dtype=torch.float32)
                    torch.cuda.synchronize()
                    want = F.conv2d(x.double(), weight.double(), bias.double(), stride=stride,
                                    padding=padding, groups=groups)
                    self.assertEqual(got.shape, want.shape)
                    self.assertTrue(got.is_contiguous(memory_format=layout))
                    self.assertLess(max_error(got, want), 1e-3)

    def test_lists_as_pytorch_takes_them(self):
        x = torch.randn(1, 16, 10, 10, device="cuda", dtype=torch.half).to(
            memory_format=torch.channels_last)
        weight = torch.randn(16, 16, 3, 3, device="cuda", dtype=torch.half).to(
            memory_format=torch.channels_last)
        got = tensorcc.conv2d(x, weight, stride=[2, 2], padding=[1, 1], out_dtype=torch.float32)
        torch.cuda.synchronize()
        want = F.conv2d(x.double(), weight.double(), stride=2, padding=1)
        self.assertLess(max_error(got, want), 1e-3)

    def test_output_given_and_poisoned(self):
        x = torch.randn(4, 32, 9, 9, device="cuda", dtype=torch.half).to(
            memory_format=torch.channels_last)
        weight = torch.randn(48, 32, 3, 3, device="cuda", dtype=torch.half).to(
            memory_format=torch.channels_last)
        kernel = tensorcc.compile_conv2d(batch=4, height=9, width=9, in_channels=32,
                                         out_channels=48, kernel_size=3, padding=1,
                                         out_dtype="float32", arch=tensorcc.device_arch(0))
        out = torch.full((4, 48, 9, 9), float("nan"), device="cuda").to(
            memory_format=torch.channels_last)
        self.assertIs(tensorcc.run(kernel, x, weight, out=out), out)
        torch.cuda.synchronize()
        want = F.conv2d(x.double(), weight.double(), padding=1)
        self.assertFalse(torch.isnan(out).any().item())
        self.assertLess(max_error(out, want), 1e-3)

    def test_runs_on_the_current_stream(self):
        a = torch.randn(512, 256, device="cuda", dtype=torch.half)
        b = torch.randn(256, 384, device="cuda", dtype=torch.half)
        stream = torch.cuda.Stream()
        streams = []
        launch = tensorcc.Kernel.launch

        def recording(kernel, pointers, device=0, stream=0, workspaces=None):
            streams.append(stream)
            return launch(kernel, pointers, device, stream, workspaces)

        tensorcc.Kernel.launch = recording
        try:
            with torch.cuda.stream(stream):
                c = tensorcc.matmul(a, b, out_dtype=torch.float32, relu=False)
        finally:
            tensorcc.Kernel.launch = launch
        self.assertEqual(streams, [stream.cuda_stream])
        self.assertNotEqual(stream.cuda_stream, torch.cuda.default_stream().cuda_stream)
        stream.synchronize()
        self.assertLess(max_error(c, a.double() @ b.double()), 1e-3)

    def test_matmul_column_major_and_batched(self):
        a = torch.randn(3, 200, 96, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(3, 64, 96, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
        c = tensorcc.matmul(a, b, out_dtype=torch.float32)
        torch.cuda.synchronize()
        self.assertEqual(c.shape, (3, 200, 64))
        self.assertLess(max_error(c, a.double() @ b.double()), 1e-2)

    def test_bad_tensors_are_refused(self):
        kernel = tensorcc.compile_matmul(m=64, n=64, k=64, arch=tensorcc.device_arch(0))
        a = torch.randn(64, 64, device="cuda", dtype=torch.half)
        with self.assertRaises(tensorcc.Error) as caught:
            tensorcc.run(kernel, a, a.float())
        self.assertIn("B: expected float16, got float32", str(caught.exception))
        with self.assertRaises(tensorcc.Error) as caught:
            tensorcc.run(kernel, a, a[:, :63])
        self.assertIn("B: expected a float16 tensor of shape [1, 64, 64]", str(caught.exception))
        with self.assertRaises(tensorcc.Error):
            tensorcc.run(kernel, a.cpu(), a)

    def test_custom_op_in_torch_compile(self):
        if not hasattr(torch.library, "custom_op"):
            self.skipTest("torch.library.custom_op needs PyTorch 2.4")
        op = tensorcc.register_custom_ops()
        x = torch.randn(2, 16, 12, 12, device="cuda", dtype=torch.half).to(
            memory_format=torch.channels_last)
        weight = torch.randn(32, 16, 3, 3, device="cuda", dtype=torch.half).to(
            memory_format=torch.channels_last)

        def block(x, weight):
            return torch.relu(op(x, weight, None, [1, 1], [1, 1], [1, 1], 1)) * 2

        got = torch.compile(block, backend="aot_eager", fullgraph=True)(x, weight)
        torch.cuda.synchronize()
        want = torch.relu(F.conv2d(x.double(), weight.double(), padding=1)) * 2
        self.assertLess(max_error(got, want), 2e-3)


if __name__ == "__main__":
    sys.exit(unittest.main())
