"""Times tcc's compile of the tensor-core tutorial's convolution against cuDNN and the TVM
tutorial's own kernel, in one run.

Run on a GPU host with PyTorch, CuPy and nvcc:
    python3 bench/tutorial_vs_cudnn.py --tcc build/tcc-conv
It runs `tcc-conv --run` (which checks its output against a CPU reference and times the
kernel with CUDA events), builds bench/tutorial_kernel.cu with nvcc and checks it against
PyTorch, and times PyTorch's conv2d (cuDNN, fp16, channels_last) on the same layer.
Every time is the median of many launches after a warm-up; absolute times drift between
runs, so compare numbers from one run only.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import cupy
import torch

from layers import median_ms  # bench/layers.py: the same timing for every benchmark

N, H, W, C, K, R, S = 256, 14, 14, 256, 512, 3, 3
WARMUP, RUNS = 10, 50  # as tcc-conv --run times its kernel
FLOP = 2.0 * N * H * W * C * K * R * S


def run_tcc(binary):
    out = subprocess.run([binary, "--run", "--runs", "50", "--warmup", "10"],
                         capture_output=True, text=True)
    print(out.stdout + out.stderr, end="")
    if out.returncode != 0:
        sys.exit("tcc-conv --run failed")
    return float(re.search(r"time: ([0-9.]+) ms", out.stdout).group(1))


def run_tutorial_kernel(x_nchw, w_kcrs, reference):
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tutorial_kernel.cu")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "tutorial.cubin")
        subprocess.run(["nvcc", "-O3", "-cubin", "-gencode=arch=compute_90,code=sm_90",
                        "-o", cubin, src], check=True)
        kernel = cupy.RawModule(path=cubin).get_function("tutorial_conv")
    # NHWCnc: (N/16, H, W, C/16, 16n, 16c); filter (R, S, C/16, K/16, 16c, 16k).
    a = x_nchw.reshape(N // 16, 16, C // 16, 16, H, W).permute(0, 4, 5, 2, 1, 3).contiguous()
    w = w_kcrs.reshape(K // 16, 16, C // 16, 16, R, S).permute(4, 5, 2, 0, 3, 1).contiguous()
    out = torch.full((N // 16, H, W, K // 16, 16, 16), float("nan"), device="cuda")
    args = (a.data_ptr(), w.data_ptr(), out.data_ptr())
    launch = lambda: kernel((2, 4, 196), (32, 4, 2), tuple(cupy.uint64(p) for p in args))
    launch()
    torch.cuda.synchronize()
    got = out.permute(0, 4, 3, 5, 1, 2).reshape(N, K, H, W)
    error = ((got.double() - reference).abs().max() / reference.abs().max()).item()
    return median_ms(launch, WARMUP, RUNS), error


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tcc", required=True)
    args = parser.parse_args()
    print("device:", torch.cuda.get_device_name(0))
    torch.manual_seed(0)
    x = (torch.rand(N, C, H, W, device="cuda") * 2 - 1).half()
    w = (torch.rand(K, C, R, S, device="cuda") * 2 - 1).half()
    reference = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)

    tcc_ms = run_tcc(args.tcc)
    tutorial_ms, tutorial_error = run_tutorial_kernel(x, w, reference)
    xc, wc = x.to(memory_format=torch.channels_last), w.to(memory_format=torch.channels_last)
    cudnn_ms = median_ms(lambda: torch.nn.functional.conv2d(xc, wc, padding=1), WARMUP, RUNS)

    print(f"tutorial kernel (nvcc): max error relative to max |ref| {tutorial_error:.2e}")
    print(f"{'kernel':<28}{'ms':>9}{'TFLOP/s':>10}{'vs cuDNN':>10}")
    for name, ms in (("tcc", tcc_ms), ("TVM tutorial kernel (nvcc)", tutorial_ms),
                     ("cuDNN (PyTorch conv2d)", cudnn_ms)):
        print(f"{name:<28}{ms:9.3f}{FLOP / ms / 1e9:10.1f}{ms / cudnn_ms:10.2f}x")
    print(f"tcc / tutorial kernel: {tcc_ms / tutorial_ms:.3f}")


if __name__ == "__main__":
    main()
