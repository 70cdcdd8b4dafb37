#!/usr/bin/env python3
"""GPU checks of a time-stepping stage that need several grid sizes together:
- the error against the analytic solution falls at second order (dt ∝ h², fixed end time), in
  double, for each boundary condition;
- Jacobi converges for the Poisson problem, its error falls at second order, and its iteration
  count grows like N² (about 4× when N doubles).

usage: heat_accuracy.py STAGE_PROGRAM      exits 77 (skip) without a GPU"""
import json
import math
import os
import subprocess
import sys
import tempfile

program = sys.argv[1]
probe = subprocess.run([program, "--as-test", "--check-only", "--n", "3"], capture_output=True, text=True)
if probe.returncode == 77:
    print(probe.stdout.strip())
    sys.exit(77)

failures = []


def records(args):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "r.json")
        run = subprocess.run([program, *args, "--json", path], capture_output=True, text=True, timeout=500)
        if run.returncode != 0:
            failures.append(f"{args}: exit {run.returncode}\n{run.stdout[-3000:]}{run.stderr[-2000:]}")
            return []
        return [json.loads(line) for line in open(path)]


def order(coarse, fine):
    return math.log(coarse["error"] / fine["error"]) / math.log(fine["h_inv"] / coarse["h_inv"])


for bc, sizes in [("dirichlet", "17,33,65"), ("neumann", "18,34,66"), ("periodic", "18,34,66")]:
    rs = records(["--check-only", "--precision", "double", "--bc", bc, "--t-end", "0.01", "--n", sizes])
    points = [{"error": r["analytic_error"], "h_inv": 1 / r["h"]} for r in rs]
    for a, b in zip(points, points[1:]):
        p = order(a, b)
        print(f"{bc:9} 1/h {a['h_inv']:5.0f} -> {b['h_inv']:5.0f}: error {a['error']:.3e} -> {b['error']:.3e}, "
              f"order {p:.2f}")
        if not 1.8 <= p <= 2.2:
            failures.append(f"{bc}: order of accuracy {p:.2f}, expected 2 (1.8..2.2)")

rs = records(["--jacobi", "--n", "17,33,65"])
for a, b in zip(rs, rs[1:]):
    growth = b["iterations"] / a["iterations"]
    p = math.log(a["error"] / b["error"]) / math.log(2)
    print(f"jacobi N {a['n']} -> {b['n']}: iterations {a['iterations']} -> {b['iterations']} ({growth:.2f}x), "
          f"error {a['error']:.2e} -> {b['error']:.2e} (order {p:.2f})")
    if not 3.0 <= growth <= 5.0:
        failures.append(f"Jacobi iterations grew {growth:.2f}x from N = {a['n']} to {b['n']}, expected about 4x")
    if not 1.8 <= p <= 2.2:
        failures.append(f"Jacobi error order {p:.2f} from N = {a['n']} to {b['n']}, expected 2")
for r in rs:
    if not r["converged"]:
        failures.append(f"Jacobi did not converge at N = {r['n']}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
