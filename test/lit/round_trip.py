#!/usr/bin/env python3
"""round_trip.py TCC_OPT TOOL [ARGS...]

What %tcc-conv and %tcc-matmul run in the lit suite: TOOL with ARGS, exactly as asked (the
caller's stdin, stdout and stderr, its exit status), and then, when it succeeded, the
printer/parser round trip on every kernel it emits: TOOL ARGS again with
--print-after=all --emit=loops, and each section (the loop IR after each pass, and the
final loop IR) through TCC_OPT with no passes, which must print it back byte for byte. A
mismatch fails the test with exit status 3 and a message on stderr, so no lit test can pass
while the printer writes something the parser reads differently.
"""
import os
import re
import subprocess
import sys
import tempfile

# Runs that emit no kernel (or, with --run, need a GPU; --layers-file emits several, which -o
# cannot take: test/lit/cli checks those layers' records).
NO_KERNEL = ("--help", "-h", "--version", "--list-passes", "--list-layers", "--run",
             "--layers-file")


def sections(dump):
    """The kernels of a --print-after=all dump: the text after each marker line."""
    parts = re.split(r"^// ---- after [a-z_]+ ----\n", dump, flags=re.M)
    return [part for part in parts[1:] if part]


def kernels(text):
    """The kernels of a loop IR file (split-K's product and reduction are two), each from
    its header comment on."""
    parts = re.split(r'(?=^// "/" and "%")', text, flags=re.M)
    return [part for part in parts if part.strip()]


def round_trip(tcc_opt, text, what):
    result = subprocess.run([tcc_opt], input=text, capture_output=True, text=True)
    if result.returncode != 0:
        return "%s: tcc-opt could not read it back: %s" % (what, result.stderr.strip())
    if result.stdout != text:
        return "%s: printed differently after reading back" % what
    return None


def check(tcc_opt, tool, args):
    with tempfile.TemporaryDirectory() as tmp:
        loops = os.path.join(tmp, "kernel.tir")
        run = subprocess.run([tool] + args + ["--print-after=all", "--emit=loops", "-o", loops],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return "the round trip's own run failed: %s" % run.stderr.strip()
        with open(loops) as f:
            texts = [("kernel %d of the final loop IR" % (i + 1), text)
                     for i, text in enumerate(kernels(f.read()))]
    texts += [("the loop IR after pass %d" % (i + 1), text)
              for i, text in enumerate(sections(run.stderr))]
    for what, text in texts:
        problem = round_trip(tcc_opt, text, what)
        if problem:
            return problem
    return None


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: round_trip.py TCC_OPT TOOL [ARGS...]\n")
        return 2
    tcc_opt, tool, args = argv[1], argv[2], argv[3:]
    status = subprocess.call([tool] + args)
    if status != 0 or any(arg.split("=")[0] in NO_KERNEL for arg in args):
        return status
    problem = check(tcc_opt, tool, args)
    if problem:
        sys.stderr.write("round_trip.py: %s %s: %s\n" % (os.path.basename(tool), " ".join(args),
                                                        problem))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
