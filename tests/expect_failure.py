#!/usr/bin/env python3
"""Runs PROGRAM ARGS... and passes when it fails the check (exit 1) with TEXT in its output: a
planted mistake must be caught and named. Exit 77 (skipped) is passed on.

usage: expect_failure.py TEXT PROGRAM [ARGS...]"""
import subprocess
import sys


def main(text, program, *args):
    run = subprocess.run([program, *args], capture_output=True, text=True)
    out = run.stdout + run.stderr
    if run.returncode == 77:
        print(out)
        return 77
    if run.returncode == 1 and text in out:
        print(f"caught, as it must be: exit 1 and '{text}'")
        return 0
    print(out)
    print(f"expected exit 1 and '{text}' in the output; got exit {run.returncode}"
          + ("" if text in out else " without it"))
    return 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]) if len(sys.argv) >= 3 else "usage: expect_failure.py TEXT PROGRAM [ARGS...]")
