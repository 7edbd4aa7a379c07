#!/usr/bin/env python3
"""json_check.py TOOL [--count N] < RECORDS

Reads what `TOOL --format json` wrote (JSON Lines: one object a line) with Python's json
module and checks every record against the schema of tools/cli_report.c: each key present,
none more, each value of its type (null only where the record says it may be), the error
and the exit status agreeing. Prints one summary line a record, for FileCheck:

    record 1: layer=seed_tutorial exit=0 error=- arch=sm_80 schedule=implicit_gemm/whole
              launches=conv2d run=-

Exits 1 with a message naming the record and the key on the first problem.
"""
import json
import math
import sys

NUMBER = (int, float)
KINDS = {"ok": 0, "error": 1, "usage": 2, "unsupported": 3, "check_failed": 4, "no_gpu": 5}
STATUSES = {None, "TCC_ERROR_INVALID_ARGUMENT", "TCC_ERROR_UNSUPPORTED", "TCC_ERROR_SCHEDULE",
            "TCC_ERROR_LLVM", "TCC_ERROR_CUDA", "TCC_ERROR_OUT_OF_MEMORY"}

SHAPES = {
    "tcc-conv": dict.fromkeys(["batch", "height", "width", "in_channels", "out_channels",
                               "kernel_h", "kernel_w", "stride_h", "stride_w", "pad_top",
                               "pad_bottom", "pad_left", "pad_right", "dilation_h",
                               "dilation_w", "groups", "out_height", "out_width"], int)
    | {"layout": str, "filter_layout": str},
    "tcc-matmul": {"batch": int, "m": int, "n": int, "k": int, "a_col_major": bool,
                   "b_col_major": bool},
}
OPS = {"tcc-conv": "conv2d", "tcc-matmul": "matmul"}


def nullable(kind):
    """A value that may be null: what does not apply, or what the library chooses (a zero
    field of the schedule), or a part that is absent."""
    return ("nullable", kind)


DTYPE = {"input": str, "accumulate": str, "output": str}
EPILOGUE = {"prologue": nullable(str), "prologue_arg": nullable(NUMBER), "alpha": NUMBER,
            "bias": bool, "beta": NUMBER, "residual": bool, "relu": bool,
            "clamp_min": nullable(NUMBER), "clamp_max": nullable(NUMBER)}
DEVICE = {"index": int, "name": str, "compute_capability": int, "multiprocessors": int,
          "driver_version": int}
# tcc_gemm_schedule's fields in its order; mma is mma_m, mma_n, mma_k as --mma spells them.
GEMM = {"mma": nullable(str)}
for key in ["mma_m", "mma_n", "mma_k", "block_row_warps", "block_col_warps", "warp_row_tiles",
            "warp_col_tiles", "num_total_passes", "num_fused_passes", "policy",
            "column_major_blocks", "stages", "smem_layout", "intrinsic", "split_k",
            "wgmma_steps", "copy", "producer", "store", "grid", "grid_blocks", "cluster",
            "consumers"]:
    GEMM[key] = nullable(bool if key == "column_major_blocks" else
                         str if key in ("policy", "smem_layout", "intrinsic", "copy", "producer",
                                        "store", "grid", "consumers") else int)
TUTORIAL = dict.fromkeys(["block_row_warps", "block_col_warps", "warp_row_tiles",
                          "warp_col_tiles", "chunk"], int)
LAUNCH = {"name": str, "grid": "dims", "block": "dims", "cluster": "dims", "shared_bytes": int,
          "dynamic_shared_bytes": int}
RUN = {"seed": int, "check": str, "checked": bool, "passed": bool, "outputs": int,
       "compared": int, "unwritten": int, "max_error": nullable(NUMBER),
       "normwise_error": nullable(NUMBER), "tolerance": NUMBER, "warmup": int, "runs": int,
       "median_ms": NUMBER, "tflops": NUMBER}
ERROR = {"kind": str, "status": nullable(str), "message": str}


class Problem(Exception):
    pass


def check_value(where, value, kind):
    if isinstance(kind, tuple) and kind[0] == "nullable":
        if value is None:
            return
        kind = kind[1]
    elif value is None:
        raise Problem("%s: null" % where)
    if isinstance(kind, dict):
        check_object(where, value, kind)
    elif kind == "dims":
        if not (isinstance(value, list) and len(value) == 3 and
                all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)):
            raise Problem("%s: %r is not three sizes" % (where, value))
    else:
        types = kind if isinstance(kind, tuple) else (kind,)
        # bool is an int in Python: a number must not be one, nor an int a bool.
        if isinstance(value, bool) != (bool in types) or not isinstance(value, types):
            raise Problem("%s: %r is not %s" % (where, value, kind))
        if isinstance(value, float) and not math.isfinite(value):
            raise Problem("%s: %r is not finite" % (where, value))


def check_object(where, value, schema):
    if not isinstance(value, dict):
        raise Problem("%s: %r is not an object" % (where, value))
    if list(value) != list(schema):
        raise Problem("%s: keys %s, expected %s" % (where, list(value), list(schema)))
    for key, kind in schema.items():
        check_value("%s.%s" % (where, key), value[key], kind)


def check_record(tool, where, r):
    schedule = {"kind": str, "whole": bool, "gemm": nullable(GEMM)}
    if tool == "tcc-conv":
        schedule["tutorial"] = nullable(TUTORIAL)
    top = {"tool": str, "version": str, "op": str, "layer": nullable(str),
           "shape": nullable(SHAPES[tool]), "dtype": nullable(DTYPE),
           "epilogue": nullable(EPILOGUE), "arch": nullable(str),
           "device": nullable(DEVICE), "schedule": nullable(schedule), "launches": list,
           "workspace_bytes": nullable(int), "compile_ms": nullable(NUMBER),
           "flops": nullable(NUMBER), "run": nullable(RUN), "exit_code": int,
           "error": nullable(ERROR)}
    check_object(where, r, top)
    if r["tool"] != tool or r["op"] != OPS[tool]:
        raise Problem("%s: tool %r, op %r" % (where, r["tool"], r["op"]))
    for i, launch in enumerate(r["launches"]):
        check_object("%s.launches[%d]" % (where, i), launch, LAUNCH)
    compiled = r["schedule"] is not None
    if compiled != bool(r["launches"]) or compiled != (r["compile_ms"] is not None):
        raise Problem("%s: schedule, launches and compile_ms disagree" % where)
    if compiled and (r["schedule"]["gemm"] is None) == (r["schedule"]["kind"] == "implicit_gemm"):
        raise Problem("%s: schedule.kind %r and its parts disagree" % (where, r["schedule"]["kind"]))
    error = r["error"]
    if (error is None) != (r["exit_code"] == 0):
        raise Problem("%s: exit_code %d with error %r" % (where, r["exit_code"], error))
    if error is not None:
        if KINDS.get(error["kind"]) != r["exit_code"] or error["status"] not in STATUSES:
            raise Problem("%s: error %r with exit_code %d" % (where, error, r["exit_code"]))
        if not error["message"] or "\n" in error["message"]:
            raise Problem("%s: the message is not one line: %r" % (where, error["message"]))
    run = r["run"]
    if run is not None and run["passed"] != (r["exit_code"] != 4):
        raise Problem("%s: run.passed %r with exit_code %d" % (where, run["passed"],
                                                               r["exit_code"]))


def summary(r):
    schedule = "-"
    if r["schedule"]:
        schedule = r["schedule"]["kind"] + ("/whole" if r["schedule"]["whole"] else "/knobs")
    run = "-"
    if r["run"]:
        run = "passed" if r["run"]["passed"] else "failed"
    return "layer=%s exit=%d error=%s arch=%s schedule=%s launches=%s run=%s" % (
        r["layer"] or "-", r["exit_code"], r["error"]["kind"] if r["error"] else "-",
        r["arch"] or "-", schedule, ",".join(l["name"] for l in r["launches"]) or "-", run)


def main(argv):
    if len(argv) not in (2, 4) or argv[1] not in SHAPES or (len(argv) == 4 and argv[2] != "--count"):
        sys.stderr.write("usage: json_check.py tcc-conv|tcc-matmul [--count N] < RECORDS\n")
        return 2
    lines = sys.stdin.read().split("\n")
    if lines[-1] != "":
        sys.stderr.write("json_check.py: the output does not end with a newline\n")
        return 1
    lines.pop()
    if len(argv) == 4 and len(lines) != int(argv[3]):
        sys.stderr.write("json_check.py: %d records, expected %s\n" % (len(lines), argv[3]))
        return 1
    for i, line in enumerate(lines, 1):
        where = "record %d" % i
        try:
            record = json.loads(line)
            check_record(argv[1], where, record)
        except (ValueError, Problem) as problem:
            sys.stderr.write("json_check.py: %s: %s\n" % (where, problem))
            return 1
        print("%s: %s" % (where, summary(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
