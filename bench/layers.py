"""Times tcc's default schedule against cuDNN on every layer of layers.csv, in NHWC and NCHW.

Run on a GPU host with PyTorch:
    python3 bench/layers.py --tcc build/tcc-conv [--csv ../shared/layers.csv] [--out table.md]

For each layer and layout it runs `tcc-conv --run` on the layer's shape (the kernel is
checked against the CPU reference, then timed with CUDA events: the median of --runs
launches after --warmup), and times PyTorch's conv2d on the same shape (cuDNN, float16,
channels_last for NHWC and contiguous for NCHW, cudnn.benchmark on so cuDNN picks its
fastest algorithm) the same way, its launches queued behind a sleep kernel so that no host
time falls between its events, all in one run: absolute times drift between runs, so
compare numbers from one run only.

Types: tcc reads float16 and accumulates in float32 (its default); cuDNN's float16
convolution reads and writes float16 (PyTorch offers no float32 output for float16
inputs), so the cuDNN column is "same input dtype", and its output is half the bytes.
"""
import argparse
import csv
import os
import re
import statistics
import subprocess
import sys

import torch

TIME_RE = re.compile(r"time: ([0-9.]+) ms")
ERROR_RE = re.compile(r"max relative error: ([0-9.eE+-]+|nan|inf)")
# About 0.1 s of GPU time at H100/H200 clocks: long enough for the host to queue every
# timed launch of one measurement behind it.
SLEEP_CYCLES = 200_000_000
SCHEDULE_RE = re.compile(r"^schedule: (implicit GEMM: .*)$", re.MULTILINE)


def parse_args():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default_csv = os.path.join(os.path.dirname(root), "shared", "layers.csv")
    if not os.path.exists(default_csv):
        default_csv = os.path.join(root, "shared", "layers.csv")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tcc", required=True, help="path to tcc-conv")
    parser.add_argument("--csv", default=default_csv, help="the layers (default: %(default)s)")
    parser.add_argument("--out", help="also write the table as markdown to this file")
    parser.add_argument("--runs", type=int, default=50, help="timed launches (default 50)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed launches first")
    parser.add_argument("--layouts", default="nhwc,nchw", help="comma-separated (nhwc,nchw)")
    parser.add_argument("--layer", action="append", help="only these layers (repeatable)")
    parser.add_argument("--tcc-arg", action="append", default=[],
                        help="one more argument for tcc-conv (repeatable)")
    parser.add_argument("--shape-options", action="store_true",
                        help="pass the shape options even if tcc-conv has --layer")
    parser.add_argument("--verbose", action="store_true", help="print tcc-conv's output")
    return parser.parse_args()


def read_layers(path, only):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    layers = []
    for row in rows:
        layer = {key: (value if key == "name" else int(value)) for key, value in row.items()}
        if not only or layer["name"] in only:
            layers.append(layer)
    return layers


def out_size(size, kernel, stride, pad, dilation):
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def flops(layer):
    p = out_size(layer["H"], layer["R"], layer["stride"], layer["pad"], layer["dilation"])
    q = out_size(layer["W"], layer["S"], layer["stride"], layer["pad"], layer["dilation"])
    per_group = layer["C"] // layer["groups"]
    return 2.0 * layer["N"] * p * q * layer["K"] * per_group * layer["R"] * layer["S"]


def tool_options(binary):
    """The options tcc-conv's --help lists (the tool grows; older ones lack some)."""
    try:
        out = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return set(re.findall(r"^\s+(--[a-z-]+)", out.stdout + out.stderr, re.MULTILINE))


def tcc_command(args, layer, layout, output=None):
    command = [args.tcc]
    if args.use_layer_flag:
        command += ["--layer", layer["name"]]
    else:
        command += ["--batch", str(layer["N"]), "--height", str(layer["H"]),
                    "--width", str(layer["W"]), "--in-channels", str(layer["C"]),
                    "--out-channels", str(layer["K"]), "--kernel", f"{layer['R']}x{layer['S']}",
                    "--stride", str(layer["stride"]), "--pad", str(layer["pad"])]
        # Only where they differ from 1, so a tool without these options still runs the rest.
        if layer["dilation"] != 1:
            command += ["--dilation", str(layer["dilation"])]
        if layer["groups"] != 1:
            command += ["--groups", str(layer["groups"])]
    command += ["--layout", layout]
    # The implicit GEMM's default schedule, printed on stderr (--verbose).
    if "--schedule" in args.tool_options:
        command += ["--schedule", "default"]
    if "--verbose" in args.tool_options:
        command += ["--verbose"]
    if output:
        command += ["--out", output]
    command += ["--run", "--runs", str(args.runs), "--warmup", str(args.warmup)]
    return command + args.tcc_arg


def run_tcc(args, layer, layout, output=None):
    """(median ms or None, max relative error or None, correct, one-line note, schedule)."""
    command = tcc_command(args, layer, layout, output)
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, None, False, "timed out", ""
    text = out.stdout + out.stderr
    if args.verbose or out.returncode != 0:
        print("$ " + " ".join(command))
        print(text, end="" if text.endswith("\n") else "\n")
    time_match, error_match = TIME_RE.search(text), ERROR_RE.search(text)
    ms = float(time_match.group(1)) if time_match else None
    error = float(error_match.group(1)) if error_match else None
    # tcc-conv exits 1 on a failed check; a missing error line means nothing was compared.
    correct = out.returncode == 0 and error is not None
    note = "" if out.returncode == 0 else f"exit {out.returncode}: " + last_line(text)
    schedule = SCHEDULE_RE.search(text)
    return ms, error, correct, note, schedule.group(1) if schedule else ""


def last_line(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:120] if lines else ""


def median_ms(launch, warmup, runs):
    """The median of `runs` launches, each bracketed by its own events, all queued behind a
    sleep kernel so that PyTorch's host time between launches stays out of the brackets (as
    tcc's runtime times: its launches queue back to back). Timed one at a time, cuDNN's seed
    layer measured 0.195 ms on an H100 whose kernel runs 0.157 ms."""
    for _ in range(warmup):
        launch()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    torch.cuda._sleep(SLEEP_CYCLES)
    for start, end in zip(starts, ends):
        start.record()
        launch()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in zip(starts, ends))


def time_cudnn(layer, layout, warmup, runs):
    n, c, h, w, k = layer["N"], layer["C"], layer["H"], layer["W"], layer["K"]
    g = layer["groups"]
    x = torch.randn(n, c, h, w, device="cuda", dtype=torch.float16)
    weight = torch.randn(k, c // g, layer["R"], layer["S"], device="cuda", dtype=torch.float16)
    if layout == "nhwc":
        x = x.to(memory_format=torch.channels_last)
        weight = weight.to(memory_format=torch.channels_last)
    conv = torch.nn.functional.conv2d

    def launch():
        conv(x, weight, stride=layer["stride"], padding=layer["pad"],
             dilation=layer["dilation"], groups=g)

    return median_ms(launch, warmup, runs)


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def verdict(correct, yes="correct", no="NOT CORRECT"):
    return "n/a" if correct is None else yes if correct else no


def ratio(a, b):
    return a / b if a and b else None


HEADER = ["layer", "layout", "tcc ms", "cuDNN ms", "tcc/cuDNN", "tcc TFLOP/s", "max rel err",
          "correct", "tcc f16-out ms", "f16-out/cuDNN", "f16-out correct"]


def table_rows(results):
    rows = []
    for r in results:
        tflops = r["flops"] / r["tcc_ms"] / 1e9 if r["tcc_ms"] else None
        half = r["half"]
        rows.append([r["name"], r["layout"].upper(), fmt(r["tcc_ms"], ".4f"),
                     fmt(r["cudnn_ms"], ".4f"), fmt(ratio(r["tcc_ms"], r["cudnn_ms"]), ".2f"),
                     fmt(tflops, ".1f"), fmt(r["error"], ".2e"), "yes" if r["correct"] else "no",
                     fmt(half["ms"], ".4f"), fmt(ratio(half["ms"], r["cudnn_ms"]), ".2f"),
                     verdict(half["correct"], "yes", "no")])
    return rows


def print_table(rows):
    widths = [max(len(str(row[i])) for row in rows + [HEADER]) for i in range(len(HEADER))]

    def line(values):
        return "  ".join(str(v).ljust(widths[i]) if i < 2 else str(v).rjust(widths[i])
                         for i, v in enumerate(values))

    print(line(HEADER))
    print("-" * len(line(HEADER)))
    for row in rows:
        print(line(row))


def tcc_description(args):
    if args.use_layer_flag:
        return " ".join(["tcc-conv"] + tcc_command(args, {"name": "LAYER"}, "LAYOUT")[1:])
    return "tcc-conv SHAPE --layout LAYOUT --run"


def markdown(rows, results, args):
    props = torch.cuda.get_device_properties(0)
    lines = [
        f"# tcc vs cuDNN on layers.csv ({torch.cuda.get_device_name(0)}, "
        f"sm_{props.major}{props.minor})",
        "",
        f"One run of `python3 bench/layers.py --tcc {args.tcc}`.",
        "",
        f"- tcc: `{tcc_description(args)}`: the implicit GEMM's default schedule, float16 "
        "inputs, float32 accumulation and output (\"tcc ms\"), and the same with `--out f16` "
        "(\"tcc f16-out ms\", cuDNN's output type); each checked against the double-precision "
        "CPU reference (max |got - ref| / max |ref|, all outputs up to 1M, else a sample).",
        f"- cuDNN: PyTorch {torch.__version__} `torch.nn.functional.conv2d` (cuDNN "
        f"{torch.backends.cudnn.version()}, `cudnn.benchmark = True`), float16 in and out "
        "(PyTorch has no float32 output for float16 inputs), channels_last tensors for NHWC, "
        "contiguous for NCHW.",
        f"- Times: median of {args.runs} launches after {args.warmup} warm-up launches, CUDA "
        "events around each launch, the launches queued back to back (cuDNN's behind a sleep "
        "kernel, so that no host time falls inside its events); tcc/cuDNN below 1 means tcc "
        "is faster.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(HEADER) - 2)) + "|",
    ]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    schedules = [(r["name"], r["layout"].upper(), r["schedule"]) for r in results
                 if r["schedule"]]
    if schedules:
        lines += ["", "Default schedules (tcc-conv --verbose):", ""]
        lines += [f"- {name} {layout}: {schedule}" for name, layout, schedule in schedules]
    notes = [f"- {r['name']} {r['layout'].upper()}{tag}: {note}" for r in results
             for tag, note in (("", r["note"]), (" f16-out", r["half"]["note"])) if note]
    if notes:
        lines += ["", "Failures:", ""] + notes
    return "\n".join(lines) + "\n"


def measure(args, layer, layout):
    tcc_ms, error, correct, note, schedule = run_tcc(args, layer, layout)
    half_ms, half_error, half_correct, half_note = None, None, None, ""
    if "--out" in args.tool_options:  # an older tcc-conv writes float32 only
        half_ms, half_error, half_correct, half_note, _ = run_tcc(args, layer, layout, "f16")
    cudnn_ms = time_cudnn(layer, layout, args.warmup, args.runs)
    print(f"{layer['name']} {layout}: tcc {fmt(tcc_ms, '.4f')} ms (error {fmt(error, '.2e')}, "
          f"{verdict(correct)}), tcc f16-out {fmt(half_ms, '.4f')} ms "
          f"(error {fmt(half_error, '.2e')}, {verdict(half_correct)}), "
          f"cuDNN {cudnn_ms:.4f} ms", flush=True)
    return {"name": layer["name"], "layout": layout, "tcc_ms": tcc_ms, "cudnn_ms": cudnn_ms,
            "error": error, "correct": correct, "note": note, "schedule": schedule,
            "flops": flops(layer),
            "half": {"ms": half_ms, "correct": half_correct, "note": half_note}}


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device for PyTorch")
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    print("device:", torch.cuda.get_device_name(0), "| torch", torch.__version__,
          "| cuDNN", torch.backends.cudnn.version())
    args.tool_options = tool_options(args.tcc)
    # By name where the tool knows the layers (as the issue asks); the shape options otherwise.
    args.use_layer_flag = not args.shape_options and "--layer" in args.tool_options
    results = [measure(args, layer, layout) for layer in read_layers(args.csv, args.layer)
               for layout in args.layouts.split(",")]
    rows = table_rows(results)
    print()
    print_table(rows)
    if args.out:
        with open(args.out, "w") as f:
            f.write(markdown(rows, results, args))
        print("wrote", args.out)
    return 0 if all(r["correct"] and r["half"]["correct"] is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
