#!/usr/bin/env python3
"""A stage program given bad input must exit non-zero with a message that names the problem,
never crash. Runs on any machine: arguments are parsed before the GPU is touched, and the
"no GPU" case hides the GPUs with CUDA_VISIBLE_DEVICES.

usage: test_command_line.py STAGE_PROGRAM"""
import os
import subprocess
import sys

program = sys.argv[1]
failures = []


def expect(args, code, text, env=None):
    run = subprocess.run([program, *args], capture_output=True, text=True, timeout=60,
                         env={**os.environ, **(env or {})})
    output = run.stdout + run.stderr
    if run.returncode != code or text not in output:
        failures.append(f"{args} {env or ''}: expected exit {code} and '{text}', got exit {run.returncode}:\n{output}")


expect(["--n", "2"], 2, "too small")
expect(["--n", "1626"], 2, "too large")
expect(["--n", "12x"], 2, "'12x'")
expect(["--reps", "0"], 2, "--reps")
expect(["--frobnicate"], 2, "unknown option '--frobnicate'")
expect(["--json"], 2, "needs a value")
expect(["--json", "/nonexistent-dir/x.json", "--n", "3"], 2, "cannot open")
expect(["--help"], 0, "usage:")
no_gpu = {"CUDA_VISIBLE_DEVICES": ""}
expect(["--n", "3", "--check-only"], 3, "no CUDA GPU is available", no_gpu)
expect(["--n", "3", "--check-only", "--as-test"], 77, "SKIP: no CUDA GPU", no_gpu)

for f in failures:
    print(f)
print(f"{10 - len(failures)} of 10 command-line cases as expected")
sys.exit(1 if failures else 0)
