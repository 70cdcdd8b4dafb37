#!/usr/bin/env python3
"""A stage program given bad input must exit non-zero with a message that names the problem,
never crash. Runs on any machine: arguments are parsed before the GPU is touched, and the
"no GPU" case hides the GPUs with CUDA_VISIBLE_DEVICES.

usage: test_command_line.py [--heat | --order] STAGE_PROGRAM
       (--heat: a time-stepping stage, 07 onward; --order: stage 10, the stencil's order R)"""
import os
import subprocess
import sys

heat = sys.argv[1] == "--heat"
order = sys.argv[1] == "--order"
program = sys.argv[-1]
failures = []
cases = 0


def expect(args, code, text, env=None):
    global cases
    cases += 1
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
if not heat:
    expect(["--time-only", "--check-only"], 2, "--check-only and --time-only exclude each other")
    expect(["--time-only=1"], 2, "takes no value")
else:
    expect(["--time-only", "--jacobi"], 2, "choose one")
if order:
    expect(["--order", "5"], 2, "R must be 1, 2, 3 or 4")
    expect(["--order", "0"], 2, "R must be 1, 2, 3 or 4")
    expect(["--order", "1,x"], 2, "expects orders like 4 or 1,2,3,4, got '1,x'")
    expect(["--kernel", "nope"], 2, "--kernel expects basic, tiled, fast or all")
if heat:
    expect(["--n", "64", "--dt", "1e-3"], 2, "above the stability limit")
    expect(["--bc", "robin"], 2, "dirichlet, neumann or periodic")
    expect(["--precision", "fp8"], 2, "float, double, half or bf16")
    expect(["--steps", "3", "--t-end", "1"], 2, "exclude each other")
    expect(["--jacobi", "--bc", "periodic"], 2, "Dirichlet")
    expect(["--fuse", "0"], 2, "--fuse must be at least 1")
    expect(["--fuse", "two"], 2, "'two'")
    if "08_temporal_blocking" in os.path.basename(program):
        expect(["--fuse", "9"], 2, "fuses at most 8 steps per pass")
    else:
        expect(["--fuse", "2"], 2, "fusing steps is stage 08")
no_gpu = {"CUDA_VISIBLE_DEVICES": ""}
expect(["--n", "3", "--check-only"], 3, "no CUDA GPU is available", no_gpu)
expect(["--n", "3", "--check-only", "--as-test"], 77, "SKIP: no CUDA GPU", no_gpu)

for f in failures:
    print(f)
print(f"{cases - len(failures)} of {cases} command-line cases as expected")
sys.exit(1 if failures else 0)
