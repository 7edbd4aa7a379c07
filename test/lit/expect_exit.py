#!/usr/bin/env python3
"""expect_exit.py STATUS COMMAND [ARGS...]

Runs COMMAND with the caller's stdin, stdout and stderr, and exits 0 if it exited with
exactly STATUS; otherwise says what happened on stderr and exits 1. A signal (a crash)
never matches. Used by the lit tests as %expect-exit (see lit.cfg.py).
"""
import subprocess
import sys


def main(argv):
    if len(argv) < 3 or not argv[1].lstrip("-").isdigit():
        sys.stderr.write("usage: expect_exit.py STATUS COMMAND [ARGS...]\n")
        return 2
    expected = int(argv[1])
    try:
        status = subprocess.call(argv[2:])
    except OSError as error:
        sys.stderr.write("expect_exit.py: cannot run %s: %s\n" % (argv[2], error))
        return 1
    if status == expected:
        return 0
    if status < 0:
        sys.stderr.write("expect_exit.py: %s died of signal %d (expected exit status %d)\n"
                         % (argv[2], -status, expected))
    else:
        sys.stderr.write("expect_exit.py: %s exited with status %d (expected %d)\n"
                         % (argv[2], status, expected))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
