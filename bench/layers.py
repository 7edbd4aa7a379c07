"""Times tcc's default schedule against cuDNN on every layer of layers.csv, in NHWC and NCHW.

Run on a GPU host with PyTorch:
    python3 bench/layers.py --tcc build/tcc-conv [--csv ../shared/layers.csv] [--out table.md]

tcc: for each layout (and output type) one process, `tcc-conv --layers-file LAYERS --format
json --run`, compiles, checks (against the CPU reference) and times every layer on one device,
and writes a JSON record a layer (README, "tcc-conv as a program"): the time is the median of
--runs launches after --warmup, timed with CUDA events. cuDNN: PyTorch's conv2d on the same
shape (float16, channels_last for NHWC and contiguous for NCHW, cudnn.benchmark on so cuDNN
picks its fastest algorithm) timed the same way, its launches queued behind a sleep kernel so
that no host time falls between its events, all in one run: absolute times drift between
runs, so compare numbers from one run only.

Types (--dtype): tcc reads float16 (or bfloat16, or int8) and accumulates in float32 (int32
for int8), its default output; cuDNN's float16 (bfloat16) convolution reads and writes that
type (PyTorch offers no float32 output for them), so the cuDNN column is "same input dtype",
and its output is half the bytes; the "f16-out" ("bf16-out") columns are tcc with --out f16
(bf16), cuDNN's output type. PyTorch has no int8 convolution on CUDA: with --dtype s8 the
table has tcc's times only.

Below the table: the geometric mean and the largest tcc/cuDNN of each layout and output type.

Writes: the table on stdout; with --out, the table as markdown, and beside it (or where
--results-csv and --plot say) every number as CSV and one plot of tcc/cuDNN per layer (PNG
through matplotlib where it is installed, else an SVG written here).
"""
import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import torch

# About 0.1 s of GPU time at H100/H200 clocks: long enough for the host to queue every
# timed launch of one measurement behind it.
SLEEP_CYCLES = 200_000_000
# Seconds a layer may take in tcc-conv (compile, CPU reference, timing): the process of all
# layers gets this much a layer.
SECONDS_A_LAYER = 600
LAYER_COLUMNS = ["N", "H", "W", "C", "K", "R", "S", "stride", "pad", "dilation", "groups"]
# --dtype: its name; PyTorch's type for cuDNN (None: PyTorch has no such convolution on CUDA);
# tcc-conv's --out for cuDNN's output type (None: only tcc's default output).
DTYPES = {"f16": {"name": "float16", "torch": "float16", "narrow_out": "f16"},
          "bf16": {"name": "bfloat16", "torch": "bfloat16", "narrow_out": "bf16"},
          "s8": {"name": "int8", "torch": None, "narrow_out": None}}


def parse_args():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    default_csv = os.path.join(os.path.dirname(root), "shared", "layers.csv")
    if not os.path.exists(default_csv):
        default_csv = os.path.join(root, "shared", "layers.csv")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tcc", required=True, help="path to tcc-conv")
    parser.add_argument("--csv", default=default_csv, help="the layers (default: %(default)s)")
    parser.add_argument("--out", help="also write the table as markdown to this file")
    parser.add_argument("--results-csv",
                        help="write every number as CSV here (default with --out: beside it, "
                             "NAME.csv)")
    parser.add_argument("--plot",
                        help="plot tcc/cuDNN per layer here, .png (matplotlib) or .svg "
                             "(default with --out: beside it, NAME.png, or NAME.svg without "
                             "matplotlib)")
    parser.add_argument("--runs", type=int, default=50, help="timed launches (default 50)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed launches first")
    parser.add_argument("--layouts", default="nhwc,nchw", help="comma-separated (nhwc,nchw)")
    parser.add_argument("--dtype", default="f16", choices=sorted(DTYPES),
                        help="inputs of tcc and cuDNN (default f16; s8: tcc only)")
    parser.add_argument("--layer", action="append", help="only these layers (repeatable)")
    parser.add_argument("--tcc-arg", action="append", default=[],
                        help="one more argument for tcc-conv (repeatable)")
    parser.add_argument("--shape-options", action="store_true",
                        help="run tcc-conv once a layer with its shape as options, instead of "
                             "once for all layers with --layers-file")
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


def shape_options(layer):
    command = ["--batch", str(layer["N"]), "--height", str(layer["H"]),
               "--width", str(layer["W"]), "--in-channels", str(layer["C"]),
               "--out-channels", str(layer["K"]), "--kernel", f"{layer['R']}x{layer['S']}",
               "--stride", str(layer["stride"]), "--pad", str(layer["pad"])]
    # Only where they differ from 1, so a tool without these options still runs the rest.
    if layer["dilation"] != 1:
        command += ["--dilation", str(layer["dilation"])]
    if layer["groups"] != 1:
        command += ["--groups", str(layer["groups"])]
    return command


def tcc_options(args, layout, output=None):
    """What every tcc-conv run takes after the layers: the layout, the implicit GEMM's
    default schedule, JSON records, the run."""
    command = ["--layout", layout, "--schedule", "default", "--format", "json"]
    if args.dtype != "f16":  # f16 is tcc-conv's default; older tools lack --dtype
        command += ["--dtype", args.dtype]
    if output:
        command += ["--out", output]
    command += ["--run", "--runs", str(args.runs), "--warmup", str(args.warmup)]
    return command + args.tcc_arg


def run_records(args, command, timeout):
    """The records tcc-conv wrote (those before a timeout too), and a note when it failed
    without saying why in a record."""
    if args.verbose:
        print("$ " + " ".join(command), flush=True)
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        stdout, stderr, status = out.stdout, out.stderr, out.returncode
    except subprocess.TimeoutExpired as expired:
        stdout = expired.stdout.decode() if isinstance(expired.stdout, bytes) else expired.stdout
        stdout, stderr, status = stdout or "", "timed out", None
    if args.verbose or status not in (0, 2, 3, 4):
        sys.stdout.write(stderr if stderr.endswith("\n") or not stderr else stderr + "\n")
    records = []
    for line in stdout.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            pass  # a line cut short by the timeout
    note = "timed out" if status is None else "" if status == 0 else \
        f"exit {status}: " + last_line(stderr)
    return records, note


def run_tcc(args, layers, layout, output=None):
    """{layer name: record} of one layout (and output type); the note of a layer without one."""
    if args.shape_options:
        records, notes = {}, {}
        for layer in layers:
            command = [args.tcc] + shape_options(layer) + tcc_options(args, layout, output)
            found, note = run_records(args, command, SECONDS_A_LAYER)
            if found:
                records[layer["name"]] = dict(found[-1], layer=layer["name"])
            notes[layer["name"]] = note
        return records, notes
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        writer = csv.writer(f)
        writer.writerow(["name"] + LAYER_COLUMNS)
        for layer in layers:
            writer.writerow([layer["name"]] + [layer[c] for c in LAYER_COLUMNS])
    try:
        command = [args.tcc, "--layers-file", f.name] + tcc_options(args, layout, output)
        found, note = run_records(args, command, SECONDS_A_LAYER * len(layers))
    finally:
        os.unlink(f.name)
    records = {r["layer"]: r for r in found if r.get("layer")}
    if len(found) == 1 and not found[0].get("layer"):  # an error before any layer
        note = found[0]["error"]["message"] if found[0]["error"] else note
    return records, {layer["name"]: note for layer in layers}


def outcome(record, note):
    """(median ms or None, max relative error or None, correct, one-line note, schedule)."""
    if record is None:
        return None, None, False, note or "no result", ""
    run, error = record["run"], record["error"]
    ms = run["median_ms"] if run else None
    max_error = run["max_error"] if run and run["checked"] else None
    correct = record["exit_code"] == 0 and run is not None and run["passed"]
    text = "" if error is None else f"exit {record['exit_code']} ({error['kind']}): " + \
        error["message"][:120]
    return ms, max_error, correct, text, schedule_text(record["schedule"])


def schedule_text(schedule):
    """The schedule as tcc-conv --verbose prints it ("implicit GEMM: mma=... block-warps=..."),
    "auto" where the library completes it."""
    if not schedule or not schedule.get("gemm"):
        return "" if not schedule else "tutorial"
    g = schedule["gemm"]

    def pair(a, b):
        return f"{a}x{b}" if a and b else "auto"

    def value(v):
        return "auto" if v is None else str(v).lower()

    parts = [f"mma={g['mma'] or 'auto'}",
             f"block-warps={pair(g['block_row_warps'], g['block_col_warps'])}",
             f"warp-tiles={pair(g['warp_row_tiles'], g['warp_col_tiles'])}",
             f"passes={value(g['num_total_passes'])}",
             f"fused-passes={value(g['num_fused_passes'])}",
             f"policy={value(g['policy'])}",
             "block-order=" + ("auto" if g["column_major_blocks"] is None else
                               "col" if g["column_major_blocks"] else "row"),
             f"stages={value(g['stages'])}", f"intrinsic={value(g['intrinsic'])}",
             f"smem={value(g['smem_layout'])}", f"split-k={value(g['split_k'])}"]
    if g["intrinsic"] == "wgmma":
        parts.append(f"wgmma-steps={value(g['wgmma_steps'])}")
    parts += [f"copy={value(g['copy'])}", f"producer={value(g['producer'])}",
              f"store={value(g['store'])}", f"grid={value(g['grid'])}"]
    if g["grid"] == "persistent":
        parts.append(f"grid-blocks={value(g['grid_blocks'])}")
    if g["cluster"] and g["cluster"] > 1:
        parts.append(f"cluster={g['cluster']}")
    return "implicit GEMM: " + " ".join(parts)


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


def time_cudnn(layer, layout, dtype, warmup, runs):
    """cuDNN's median ms, or None for a type PyTorch cannot convolve on CUDA."""
    torch_type = DTYPES[dtype]["torch"]
    if torch_type is None:
        return None
    n, c, h, w, k = layer["N"], layer["C"], layer["H"], layer["W"], layer["K"]
    g = layer["groups"]
    kind = getattr(torch, torch_type)
    x = torch.randn(n, c, h, w, device="cuda", dtype=kind)
    weight = torch.randn(k, c // g, layer["R"], layer["S"], device="cuda", dtype=kind)
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


def narrow_output(args):
    """tcc-conv's --out for cuDNN's output type ("f16", "bf16"), or None (int8: none)."""
    return DTYPES[args.dtype]["narrow_out"]


def header(args):
    rate = "tcc TOPS" if args.dtype == "s8" else "tcc TFLOP/s"
    columns = ["layer", "layout", "tcc ms", "cuDNN ms", "tcc/cuDNN", rate, "max rel err",
               "correct"]
    narrow = narrow_output(args)
    if narrow:
        columns += [f"tcc {narrow}-out ms", f"{narrow}-out/cuDNN", f"{narrow}-out correct"]
    return columns


def tflops(flop_count, ms):
    return flop_count / ms / 1e9 if ms else None


def table_rows(results, args):
    rows = []
    for r in results:
        half = r["half"]
        row = [r["name"], r["layout"].upper(), fmt(r["tcc_ms"], ".4f"),
               fmt(r["cudnn_ms"], ".4f"), fmt(ratio(r["tcc_ms"], r["cudnn_ms"]), ".2f"),
               fmt(tflops(r["flops"], r["tcc_ms"]), ".1f"), fmt(r["error"], ".2e"),
               "yes" if r["correct"] else "no"]
        if narrow_output(args):
            row += [fmt(half["ms"], ".4f"), fmt(ratio(half["ms"], r["cudnn_ms"]), ".2f"),
                    verdict(half["correct"], "yes", "no")]
        rows.append(row)
    return rows


def summary(results, args):
    """One line a layout and output type: the geometric mean and the largest tcc/cuDNN over
    the layers that both timed (the issue's yardsticks)."""
    lines = []
    outputs = [("", "tcc_ms")] + ([(f" {narrow_output(args)}-out", "half")]
                                  if narrow_output(args) else [])
    for layout in dict.fromkeys(r["layout"] for r in results):
        for label, key in outputs:
            ratios = [(ratio(r["half"]["ms"] if key == "half" else r["tcc_ms"], r["cudnn_ms"]),
                       r["name"]) for r in results if r["layout"] == layout]
            ratios = [(v, name) for v, name in ratios if v is not None]
            if not ratios:
                continue
            geomean = math.exp(sum(math.log(v) for v, _ in ratios) / len(ratios))
            worst, worst_name = max(ratios)
            lines.append(f"{layout.upper()}{label}: geometric mean of tcc/cuDNN {geomean:.3f} "
                         f"over {len(ratios)} layers, largest {worst:.2f} ({worst_name})")
    return lines


def print_table(rows, columns):
    widths = [max(len(str(row[i])) for row in rows + [columns]) for i in range(len(columns))]

    def line(values):
        return "  ".join(str(v).ljust(widths[i]) if i < 2 else str(v).rjust(widths[i])
                         for i, v in enumerate(values))

    print(line(columns))
    print("-" * len(line(columns)))
    for row in rows:
        print(line(row))


def tcc_description(args):
    if args.shape_options:
        return "tcc-conv SHAPE " + " ".join(tcc_options(args, "LAYOUT"))
    return " ".join(["tcc-conv", "--layers-file", "LAYERS"] + tcc_options(args, "LAYOUT"))


def markdown(rows, results, args):
    props = torch.cuda.get_device_properties(0)
    columns, narrow, inputs = header(args), narrow_output(args), DTYPES[args.dtype]["name"]
    accumulation = "int32" if args.dtype == "s8" else "float32"
    tcc_text = (f"the implicit GEMM's default schedule, {inputs} inputs, {accumulation} "
                "accumulation and output (\"tcc ms\")")
    if narrow:
        tcc_text += (f", and the same with `--out {narrow}` (\"tcc {narrow}-out ms\", cuDNN's "
                     "output type)")
    cudnn_text = (f"- cuDNN: PyTorch {torch.__version__} `torch.nn.functional.conv2d` (cuDNN "
                  f"{torch.backends.cudnn.version()}, `cudnn.benchmark = True`), {inputs} in "
                  f"and out (PyTorch has no float32 output for {inputs} inputs), channels_last "
                  "tensors for NHWC, contiguous for NCHW." if DTYPES[args.dtype]["torch"] else
                  f"- cuDNN: none (PyTorch {torch.__version__} has no {inputs} convolution on "
                  "CUDA).")
    lines = [
        f"# tcc vs cuDNN on layers.csv ({torch.cuda.get_device_name(0)}, "
        f"sm_{props.major}{props.minor})",
        "",
        f"One run of `python3 bench/layers.py --tcc {args.tcc}"
        + (f" --dtype {args.dtype}`." if args.dtype != "f16" else "`."),
        "",
        f"- tcc: `{tcc_description(args)}` (one process a layout): {tcc_text}; each checked "
        "against the double-precision CPU reference (max |got - ref| / max |ref|, all outputs "
        "up to 1M, else a sample).",
        cudnn_text,
        f"- Times: median of {args.runs} launches after {args.warmup} warm-up launches, CUDA "
        "events around each launch, the launches queued back to back (cuDNN's behind a sleep "
        "kernel, so that no host time falls inside its events); tcc/cuDNN below 1 means tcc "
        "is faster.",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "|".join(["---"] * 2 + ["---:"] * (len(columns) - 2)) + "|",
    ]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    lines += [""] + [f"- {line}" for line in summary(results, args)]
    schedules = [(r["name"], r["layout"].upper(), r["schedule"]) for r in results
                 if r["schedule"]]
    if schedules:
        lines += ["", "Default schedules (the records' schedule.gemm):", ""]
        lines += [f"- {name} {layout}: {schedule}" for name, layout, schedule in schedules]
    notes = [f"- {r['name']} {r['layout'].upper()}{tag}: {note}" for r in results
             for tag, note in (("", r["note"]), (f" {narrow}-out", r["half"]["note"])) if note]
    if notes:
        lines += ["", "Failures:", ""] + notes
    return "\n".join(lines) + "\n"


# half_out: tcc with cuDNN's (16-bit) output type, the dtype's --out.
CSV_HEADER = (["layer", "layout", "dtype"] + LAYER_COLUMNS +
              ["flops", "tcc_ms", "tcc_tflops", "cudnn_ms", "cudnn_tflops", "tcc_over_cudnn",
               "max_error", "tolerance", "correct", "tcc_half_out_ms", "half_out_over_cudnn",
               "half_out_correct", "arch", "device", "schedule", "note", "half_out_note"])


def write_csv(path, results, args):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_HEADER)
        for r in results:
            half = r["half"]

            def cell(v):
                return "" if v is None else str(v).lower() if isinstance(v, bool) else v

            writer.writerow([r["name"], r["layout"], args.dtype] +
                            [r["shape"][c] for c in LAYER_COLUMNS] +
                            [r["flops"], cell(r["tcc_ms"]), cell(tflops(r["flops"], r["tcc_ms"])),
                             cell(r["cudnn_ms"]), cell(tflops(r["flops"], r["cudnn_ms"])),
                             cell(ratio(r["tcc_ms"], r["cudnn_ms"])), cell(r["error"]),
                             cell(r["tolerance"]), cell(r["correct"]), cell(half["ms"]),
                             cell(ratio(half["ms"], r["cudnn_ms"])), cell(half["correct"]),
                             cell(r["arch"]), cell(r["device"]), r["schedule"], r["note"],
                             half["note"]])


def plot_series(results, args):
    """The layers in order, and one series a (layout, output type): tcc/cuDNN a layer."""
    names = list(dict.fromkeys(r["name"] for r in results))
    series = []
    for layout in dict.fromkeys(r["layout"] for r in results):
        for label, key in (("", "tcc_ms"), (f" {narrow_output(args)}-out", "half")):
            values = {}
            for r in results:
                if r["layout"] == layout:
                    ms = r["half"]["ms"] if key == "half" else r["tcc_ms"]
                    values[r["name"]] = ratio(ms, r["cudnn_ms"])
            if any(v is not None for v in values.values()):
                series.append((layout.upper() + label, [values.get(n) for n in names]))
    return names, series


COLORS = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a"]


def plot_matplotlib(path, title, names, series):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    width = 0.8 / max(len(series), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(names) + 2), 4.5))
    for i, (label, values) in enumerate(series):
        xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(names))]
        ax.bar(xs, [v or 0 for v in values], width, label=label, color=COLORS[i % len(COLORS)])
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("tcc time / cuDNN time (below 1: tcc faster)")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_svg(path, title, names, series):
    """The same grouped bars as plot_matplotlib, as an SVG written by hand."""
    def esc(text):
        return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                .replace('"', "&quot;"))

    left, top, bottom, group = 70, 40, 110, max(60, 18 * len(series) + 20)
    plot_h = 300
    width = left + group * len(names) + 160
    height = top + plot_h + bottom
    values = [v for _, vs in series for v in vs if v is not None]
    high = max(values + [1.5]) * 1.1
    step = 0.25 if high <= 2 else 0.5 if high <= 4 else 1.0

    def y(v):
        return top + plot_h - v / high * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="13">{esc(title)}</text>']
    tick = 0.0
    while tick <= high:
        out.append(f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + group * len(names)}" '
                   f'y2="{y(tick):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">'
                   f'{tick:g}</text>')
        tick += step
    bar = (group - 16) / max(len(series), 1)
    for j, name in enumerate(names):
        x0 = left + j * group + 8
        for i, (label, vs) in enumerate(series):
            if vs[j] is not None:
                out.append(f'<rect x="{x0 + i * bar:.1f}" y="{y(vs[j]):.1f}" '
                           f'width="{bar - 1:.1f}" height="{y(0) - y(vs[j]):.1f}" '
                           f'fill="{COLORS[i % len(COLORS)]}"><title>{esc(name)} {esc(label)}: '
                           f'{vs[j]:.2f}</title></rect>')
        cx = left + j * group + group / 2
        out.append(f'<text x="{cx:.1f}" y="{top + plot_h + 14}" text-anchor="end" '
                   f'transform="rotate(-35 {cx:.1f} {top + plot_h + 14})">{esc(name)}</text>')
    out.append(f'<line x1="{left}" y1="{y(1):.1f}" x2="{left + group * len(names)}" '
               f'y2="{y(1):.1f}" stroke="black" stroke-dasharray="6,4"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{y(0):.1f}" stroke="black"/>')
    out.append(f'<text x="16" y="{top + plot_h / 2}" text-anchor="middle" '
               f'transform="rotate(-90 16 {top + plot_h / 2})">tcc time / cuDNN time '
               f'(below 1: tcc faster)</text>')
    lx = left + group * len(names) + 20
    for i, (label, _) in enumerate(series):
        out.append(f'<rect x="{lx}" y="{top + 18 * i}" width="12" height="12" '
                   f'fill="{COLORS[i % len(COLORS)]}"/>')
        out.append(f'<text x="{lx + 18}" y="{top + 18 * i + 10}">{esc(label)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def write_plot(path, results, args):
    names, series = plot_series(results, args)
    title = f"tcc / cuDNN per layer ({torch.cuda.get_device_name(0)})"
    if path.endswith(".png") and not have_matplotlib():
        path = path[:-4] + ".svg"
        print("no matplotlib: writing an SVG instead")
    if path.endswith(".svg") and not have_matplotlib():
        plot_svg(path, title, names, series)
    else:
        plot_matplotlib(path, title, names, series)
    return path


def measure(args, layer, layout, tcc, half):
    """One layer and layout: tcc's records (default and 16-bit outputs) and cuDNN's time."""
    record, note = tcc[0].get(layer["name"]), tcc[1].get(layer["name"], "")
    tcc_ms, error, correct, note, schedule = outcome(record, note)
    half_ms, half_error, half_correct, half_note = None, None, None, ""
    if half is not None:  # an older tcc-conv writes float32 only
        half_ms, half_error, half_correct, half_note, _ = outcome(
            half[0].get(layer["name"]), half[1].get(layer["name"], ""))
    cudnn_ms = time_cudnn(layer, layout, args.dtype, args.warmup, args.runs)
    narrow = (f", tcc {narrow_output(args)}-out {fmt(half_ms, '.4f')} ms (error "
              f"{fmt(half_error, '.2e')}, {verdict(half_correct)})" if narrow_output(args) else "")
    print(f"{layer['name']} {layout}: tcc {fmt(tcc_ms, '.4f')} ms (error {fmt(error, '.2e')}, "
          f"{verdict(correct)}){narrow}, cuDNN {fmt(cudnn_ms, '.4f')} ms", flush=True)
    run = record["run"] if record else None
    device = record["device"] if record else None
    return {"name": layer["name"], "layout": layout, "tcc_ms": tcc_ms, "cudnn_ms": cudnn_ms,
            "error": error, "correct": correct, "note": note, "schedule": schedule,
            "flops": record["flops"] if record and record["flops"] else flops(layer),
            "tolerance": run["tolerance"] if run else None,
            "arch": record["arch"] if record else None,
            "device": device["name"] if device else None,
            "shape": layer,
            "half": {"ms": half_ms, "correct": half_correct, "note": half_note}}


def output_paths(args):
    """Where the CSV and the plot go: as asked, else beside --out."""
    stem = os.path.splitext(args.out)[0] if args.out else None
    results_csv = args.results_csv or (stem + ".csv" if stem else None)
    plot = args.plot or (stem + (".png" if have_matplotlib() else ".svg") if stem else None)
    return results_csv, plot


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device for PyTorch")
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    print("device:", torch.cuda.get_device_name(0), "| torch", torch.__version__,
          "| cuDNN", torch.backends.cudnn.version())
    args.tool_options = tool_options(args.tcc)
    if not {"--format", "--layers-file"} <= args.tool_options:
        sys.exit(f"{args.tcc} has no --format json or --layers-file: an older tcc-conv")
    layers = read_layers(args.csv, args.layer)
    layouts = args.layouts.split(",")
    # tcc first, one process a layout and output type; then cuDNN, layer by layer.
    tcc = {layout: run_tcc(args, layers, layout) for layout in layouts}
    narrow = narrow_output(args) if "--out" in args.tool_options else None
    half = {layout: run_tcc(args, layers, layout, narrow) if narrow else None
            for layout in layouts}
    results = [measure(args, layer, layout, tcc[layout], half[layout]) for layer in layers
               for layout in layouts]
    rows = table_rows(results, args)
    print()
    print_table(rows, header(args))
    for line in summary(results, args):
        print(line)
    results_csv, plot = output_paths(args)
    if args.out:
        with open(args.out, "w") as f:
            f.write(markdown(rows, results, args))
        print("wrote", args.out)
    if results_csv:
        write_csv(results_csv, results, args)
        print("wrote", results_csv)
    if plot and DTYPES[args.dtype]["torch"]:  # without cuDNN there is no ratio to draw
        print("wrote", write_plot(plot, results, args))
    return 0 if all(r["correct"] and r["half"]["correct"] is not False for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
