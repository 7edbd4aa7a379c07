#!/usr/bin/env python3
"""check_layout.py SOURCE_DIR

The layout rules README's "Layout" states, checked: a header of one stage includes only
headers of earlier stages (so no include climbs back up the pipeline), and no C file in lib/,
passes/, tools/ or test/ is longer than 700 lines. Prints each violation and exits 1 if there is
one. Run by ctest as layout/rules.
"""
import glob
import os
import re
import sys

# The stages, in pipeline order (lib/<stage>/, and passes/ after lib/lower/).
STAGES = ["support", "target", "ir", "te", "lower", "passes", "codegen", "driver", "ops",
          "reference", "runtime", "check", "tune"]
MAX_LINES = 700


def stage_of(path):
    parts = path.split("/")
    return "passes" if parts[0] == "passes" else parts[1]


def main(root):
    os.chdir(root)
    problems = []
    sources = glob.glob("lib/*/*.[ch]") + glob.glob("passes/*.[ch]")
    for path in sorted(sources):
        stage = stage_of(path)
        if stage not in STAGES:
            problems.append("%s: lib/%s/ is not a stage of the pipeline" % (path, stage))
            continue
        with open(path) as f:
            text = f.read()
        for included in re.findall(r'#include "([^"]+)"', text):
            target = included.split("/")[0]
            if target == "tcc":
                continue
            if target not in STAGES:
                problems.append("%s includes %s, which is in no stage" % (path, included))
            elif STAGES.index(target) > STAGES.index(stage):
                problems.append("%s (%s) includes %s, a later stage" % (path, stage, included))
    tools_and_tests = glob.glob("tools/*.[ch]") + glob.glob("test/**/*.[ch]", recursive=True)
    for path in sorted(sources + tools_and_tests):
        with open(path) as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES:
            problems.append("%s has %d lines (at most %d)" % (path, lines, MAX_LINES))
    for problem in problems:
        print(problem)
    print("layout: %d files staged, %d sized, %d problems"
          % (len(sources), len(sources) + len(tools_and_tests), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
