#!/usr/bin/env python3
"""Runs one stage program under one compute-sanitizer tool and fails on any reported error.

usage: sanitize.py TOOL PROGRAM [PROGRAM ARGS...]     TOOL: memcheck racecheck synccheck initcheck
Exits 77 (skip) with the reason when there is no GPU or no compute-sanitizer."""
import os
import re
import shutil
import subprocess
import sys

tool, program, args = sys.argv[1], sys.argv[2], sys.argv[3:]

probe = subprocess.run([program, "--as-test", "--check-only", "--n", "3"], capture_output=True, text=True)
if probe.returncode == 77:
    print(probe.stdout.strip())
    sys.exit(77)

sanitizer = shutil.which("compute-sanitizer") or next(
    (p for p in ("/usr/local/cuda/bin/compute-sanitizer",) if os.path.exists(p)), None)
if sanitizer is None:
    print("SKIP: compute-sanitizer not found (it ships with the CUDA Toolkit, in its bin folder)")
    sys.exit(77)

# $SANITIZER_EXTRA: more compute-sanitizer options for one test (stage 09: --report-api-errors no).
cmd = [sanitizer, "--tool", tool, "--error-exitcode", "99", *os.environ.get("SANITIZER_EXTRA", "").split(), program, *args]
run = subprocess.run(cmd, capture_output=True, text=True)
out = run.stdout + run.stderr
print(" ".join(cmd))
print(out[-4000:])
summary = re.search(r"(ERROR|RACECHECK) SUMMARY: (\d+)", out)
if run.returncode != 0 or summary is None or int(summary.group(2)) != 0:
    print(f"FAIL: {tool} reported problems (exit {run.returncode})")
    sys.exit(1)
sys.exit(0)
