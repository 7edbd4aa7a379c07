# lit configuration of tcc's tests of its tools: *.test files run tcc-conv or tcc-matmul
# and match their output (loop IR, LLVM IR, PTX, error messages) with FileCheck; *.tir files
# are loop IR that tcc-opt runs one pass on (passes/), as LLVM tests opt.
#
# Substitutions:
#   %tcc-conv      the tcc-conv of this build; when it succeeds, every kernel it emits (the
#                  loop IR after each pass, and the final loop IR) must also read back into
#                  tcc-opt and print the same (round_trip.py)
#   %tcc-matmul    the tcc-matmul of this build, likewise
#   %tcc-opt       the tcc-opt of this build
#   %tcc-tune      the tcc-tune of this build
#   %fake-cuda     the folder of a fake libcuda.so.1 (test/lit/fake_cuda): with
#                  `env LD_LIBRARY_PATH=%fake-cuda`, --run meets a described H100 whose
#                  kernels compute nothing, so its check fails
#   FileCheck      LLVM's FileCheck (found by CMake next to llvm-config)
#   %ptxas         the CUDA toolkit's ptxas; only present with the lit feature `ptxas`,
#                  so tests that assemble PTX say `REQUIRES: ptxas`
#   %json-check    cli/json_check.py: checks a tool's --format json records with Python's
#                  json module against the schema and prints a line a record for FileCheck
#   %csv-check     cli/csv_check.py: checks a --format csv table against the JSON records
#                  of the same command
#   %expect-exit   `%expect-exit N CMD ARGS...` runs CMD and succeeds only if it exited
#                  with status exactly N (see expect_exit.py). lit's builtin `not` accepts
#                  any non-zero status, and `! CMD` or `CMD; test $? -eq 1` are not
#                  portable in lit's internal shell; error tests need "exit 1 and a
#                  message", not "failed somehow", so they use this instead:
#
#                    RUN: %expect-exit 1 %tcc-conv --batch 0 > %t.out 2> %t.err
#                    RUN: FileCheck %s < %t.err
#
# Features:
#   ptxas          the CUDA toolkit's ptxas is there (above)
#   cuda-driver    libcuda.so.1 loads: tests of a machine without one say
#                  UNSUPPORTED: cuda-driver
#   gpu            and it finds a device: tests that run kernels say REQUIRES: gpu
#   nvjitlink      CMake found libnvJitLink (the CUDA toolkit's), which --emit=cubin opens:
#                  every test runs with TCC_NVJITLINK naming it, so that it is found even
#                  where the loader's path lacks it
#   xgboost        libxgboost.so.0 loads (as the xgb tuner opens it): tests of the model
#                  say `%if xgboost %{ ... %}`
#   libpq          libpq.so.5 loads (as the records store opens it for a postgresql:// URL);
#                  the tests with a server are test/postgres/*.sh's
#
# Sanitizer builds: ASAN_OPTIONS, UBSAN_OPTIONS and LSAN_OPTIONS pass through, and a
# sanitizer report exits with status 86 (not the default 1), so a tool that dies in
# AddressSanitizer can never pass for one that failed cleanly with status 1.
import ctypes
import os
import shlex
import sys

import lit.formats

config.name = "tcc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".test", ".tir"]
# Inputs/ holds what tests read, not tests.
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.tcc_binary_dir, "test", "lit")

if not config.filecheck or config.filecheck.endswith("NOTFOUND"):
    lit_config.fatal("FileCheck not found: install llvm-19-tools and re-run cmake")

tcc_conv = os.path.join(config.tcc_binary_dir, "tcc-conv")
tcc_matmul = os.path.join(config.tcc_binary_dir, "tcc-matmul")
tcc_opt = os.path.join(config.tcc_binary_dir, "tcc-opt")
tcc_tune = os.path.join(config.tcc_binary_dir, "tcc-tune")
expect_exit = os.path.join(config.test_source_root, "expect_exit.py")
round_trip = " ".join(shlex.quote(part) for part in (
    sys.executable, os.path.join(config.test_source_root, "round_trip.py"), tcc_opt))

# Config substitutions are applied before lit's own (%s, %t, ...), so %tcc-conv,
# %tcc-matmul and %tcc-opt are replaced whole before %t could match their first two
# characters.
config.substitutions.append(("%tcc-conv", round_trip + " " + shlex.quote(tcc_conv)))
config.substitutions.append(("%tcc-matmul", round_trip + " " + shlex.quote(tcc_matmul)))
config.substitutions.append(("%tcc-opt", shlex.quote(tcc_opt)))
config.substitutions.append(("%tcc-tune", shlex.quote(tcc_tune)))
# The fake libcuda.so.1 (test/lit/fake_cuda/libcuda.c): `env LD_LIBRARY_PATH=%fake-cuda CMD`
# runs a tool's --run on a described H100 whose kernels compute nothing.
config.substitutions.append(("%fake-cuda", shlex.quote(config.fake_cuda_dir)))
config.substitutions.append(
    ("%expect-exit", shlex.quote(sys.executable) + " " + shlex.quote(expect_exit)))
# A whole word only, so that e.g. a --check-prefix value containing it stays as it is.
config.substitutions.append((r"(?<![-\w/.])FileCheck(?![-\w.])", shlex.quote(config.filecheck)))
if config.ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", shlex.quote(config.ptxas)))
if config.nvjitlink:
    config.available_features.add("nvjitlink")
    config.environment["TCC_NVJITLINK"] = config.nvjitlink
for name in ("json", "csv"):
    script = os.path.join(config.test_source_root, "cli", name + "_check.py")
    config.substitutions.append(
        ("%" + name + "-check", shlex.quote(sys.executable) + " " + shlex.quote(script)))


def find_gpu():
    """Whether the driver loads (as tcc_device_open loads it), and whether it counts a
    device."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False, False
    count = ctypes.c_int(0)
    return True, (cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0
                  and count.value > 0)


def loads(library):
    try:
        ctypes.CDLL(library)
        return True
    except OSError:
        return False


if loads("libxgboost.so.0"):
    config.available_features.add("xgboost")
if loads("libpq.so.5"):
    config.available_features.add("libpq")

driver, gpu = find_gpu()
if driver:
    config.available_features.add("cuda-driver")
if gpu:
    config.available_features.add("gpu")

for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    value = os.environ.get(name, "")
    if name != "LSAN_OPTIONS" and "exitcode=" not in value:
        value = (value + ":" if value else "") + "exitcode=86"
    config.environment[name] = value
