"""probe.py KERNEL.ptx|KERNEL.cubin [...]

Reads back the im2col matrix that split_k_conv.ptx's main kernel multiplies, and says where it
differs from the true one (README.md here: a ptxas miscompile at -O2 and above). Needs CuPy and
an sm_90a GPU.

The filter is one-hot: output channel kc of the b-th launch has a single 1 at reduction index
j = 32*b + kc, so column kc of the partial sums of the slice that holds j is A[row, j], exactly
(one product, accumulated in float32). 74 launches read every entry of A.
"""
import sys
from collections import Counter

import cupy as cp
import numpy as np

N, H, W, C, K, R, S = 4, 15, 6, 48, 32, 7, 7
TOP, BOTTOM, LEFT, RIGHT = 3, 2, 2, 0
P, Q = H + TOP + BOTTOM - R + 1, W + LEFT + RIGHT - S + 1
SPLIT, ROWS, REDUCTION = 4, N * P * Q, R * S * C
GRID, BLOCK, SHARED = (1, 2, 4), (128, 1, 1), 65536  # the kernel's launch (its loop IR)


def true_im2col(x):
    """A[(n, p, q), (r, s, c)] in float64, the padding zero."""
    padded = np.pad(x.astype(np.float64), ((0, 0), (TOP, BOTTOM), (LEFT, RIGHT), (0, 0)))
    a = np.empty((N, P, Q, R, S, C))
    for r in range(R):
        for s in range(S):
            a[:, :, :, r, s, :] = padded[:, r:r + P, s:s + Q, :]
    return a.reshape(ROWS, REDUCTION)


def kernel_im2col(path, x):
    """A as the kernel multiplies it: column j of the one-hot filter's output."""
    function = cp.RawModule(path=path).get_function("conv2d")
    function.max_dynamic_shared_size_bytes = SHARED
    device_x, seen = cp.asarray(x), np.zeros((ROWS, REDUCTION))
    for first in range(0, REDUCTION, K):
        w = np.zeros((K, C, R, S), np.float16)
        for kc, j in enumerate(range(first, min(first + K, REDUCTION))):
            w[kc, j % C, j // (S * C), j // C % S] = 1
        partial = cp.full((SPLIT, ROWS, K), cp.nan, cp.float32)  # poisoned
        output = cp.zeros((N, P, Q, K), cp.float32)
        function(GRID, BLOCK, (device_x, cp.asarray(w), output, partial), shared_mem=SHARED)
        sums = cp.asnumpy(partial).sum(axis=0)
        for kc, j in enumerate(range(first, min(first + K, REDUCTION))):
            seen[:, j] = sums[:, kc]
    return seen


def main(paths):
    x = np.random.default_rng(7).uniform(-1, 1, (N, H, W, C)).astype(np.float16)
    want = true_im2col(x)
    for path in paths:
        got = kernel_im2col(path, x)
        wrong = np.argwhere(got != want)
        print(f"{path}: {len(wrong)} of {want.size} entries of A wrong")
        # Where: (the row's 16-row group of the 64-row tile, r, s, the 8-channel vector).
        where = Counter((row % 64 // 16, j // (S * C), j // C % S, j % C // 8) for row, j in wrong)
        for (group, r, s, vector), count in sorted(where.items())[:12]:
            print(f"  rows {group * 16}..{group * 16 + 15} of the tile, r={r} s={s} "
                  f"c={vector * 8}..{vector * 8 + 7}: {count}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
