#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from the lit tests, one directory a target:

  conv_cli, matmul_cli, opt_cli  the command lines of test/lit's RUN: lines, one argument a
                                 line (what fuzz_cli.c splits an input into)
  loop_ir                        test/lit's .tir files, with a first line "// passes: A,B"
                                 taken from the RUN line that runs them
  compile                        byte strings that start each of fuzz_compile.c's operators
                                 on each arch (its fields read 0 past the end), and random
                                 ones from a fixed seed

usage: make_corpus.py OUT_DIR   (test/lit is found next to this script)
"""
import hashlib
import os
import random
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LIT = os.path.join(HERE, "..", "lit")
TOOLS = {"%tcc-conv": "conv_cli", "%tcc-matmul": "matmul_cli", "%tcc-opt": "opt_cli"}
# Where a command ends in a RUN line: a pipe, a redirection, a lit conditional.
ENDS = {"|", "||", "&&", ";", ">", "2>", "<", "%}", "2>&1"}


def write(out_dir, target, content):
    directory = os.path.join(out_dir, target)
    os.makedirs(directory, exist_ok=True)
    name = hashlib.sha1(content).hexdigest()
    with open(os.path.join(directory, name), "wb") as f:
        f.write(content)


def placeholder(word):
    """Paths of the test's temporaries and inputs stand for themselves; -o never opens them."""
    return re.sub(r"%[tsS]", "x", word)


def command_lines(text):
    for line in text.splitlines():
        match = re.search(r"RUN:(.*)", line)
        if not match:
            continue
        try:
            words = shlex.split(match.group(1).replace("%{", " ").replace("%}", " %} "))
        except ValueError:
            continue
        for i, word in enumerate(words):
            if word in TOOLS:
                args = []
                for arg in words[i + 1:]:
                    if arg in ENDS or arg.startswith((">", "2>", "<")):
                        break
                    args.append(placeholder(arg))
                yield TOOLS[word], args


def passes_of(text):
    match = re.search(r"-?-passes[= ](\S+)", text)
    return match.group(1) if match else None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    counts = {}
    for root, _, files in os.walk(LIT):
        for name in sorted(files):
            path = os.path.join(root, name)
            if not name.endswith((".test", ".tir")):
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for target, args in command_lines(text):
                write(out_dir, target, "".join(a + "\n" for a in args).encode())
                counts[target] = counts.get(target, 0) + 1
            if name.endswith(".tir"):
                passes = passes_of(text)
                header = "// passes: %s\n" % passes if passes else ""
                write(out_dir, "loop_ir", (header + text).encode())
                counts["loop_ir"] = counts.get("loop_ir", 0) + 1
    # fuzz_compile: the operator (byte 0: 0-1 conv2d, 2-3 matmul, 4 the tutorial) and the
    # arch (byte 1, an index into the archs); the rest reads as zeros, the smallest problem.
    for op in range(5):
        for arch in range(8):
            write(out_dir, "compile", bytes([op, arch]))
            counts["compile"] = counts.get("compile", 0) + 1
    # And longer ones, drawn from a fixed seed, whose fields are not all zero: the shapes,
    # schedules and epilogues that a short run would take long to grow into.
    draw = random.Random(20251125)
    for _ in range(60):
        write(out_dir, "compile", bytes(draw.randrange(256) for _ in range(96)))
    for target in sorted(counts):
        print("%-12s %d seeds" % (target, len(os.listdir(os.path.join(out_dir, target)))))


if __name__ == "__main__":
    main()
