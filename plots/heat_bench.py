"""Stage 07 in the benchmark: the heat equation's speed, its launch overhead, its order of
accuracy, pictures of it, and Jacobi's iteration counts, all from the stage's solution program.

bench.py calls measure() after the one-sweep stages and stores what it returns as doc["heat"]
(the section is checked by results_schema.py and drawn by heat_plot.py); summary() prints its
table. A run that exits 1 (a wrong result, or Jacobi not converging) is recorded and reported,
not plotted; any other failure stops the bench (BenchStopped)."""
import json

from common import run_program, say
from heat_plot import loop_rate  # the figure and the table compare the stages by the loop's rate
from results_schema import BOUNDARIES, PRECISIONS
STEPS = "100"
OVERHEAD_SIZES = "32,64"  # small enough that launching a step costs more than the step itself
ACCURACY_SIZES = "16,24,32,48,64,96,128"
T_END = "0.02"  # a fixed end time: dt ∝ h², so the error should fall as h²
SNAPSHOT_SIZE, SNAPSHOTS = "128", "5"
JACOBI_SIZES = "32,64,128"
# Stage 08 against stage 07 in the same run: the loop's cell-updates/s for each S.
FUSED_SIZES, FUSED_STEPS, FUSED_S = "256,512", "64", (1, 2, 4, 8)


def jobs(sizes, reps):
    """(part of the section, what it measures, the program's options) for every run, in order.
    The rates are measured at the smallest and the largest of the bench's sizes: 12 boundary and
    precision pairs at every size would make stage 07 most of the bench's time."""
    numbers = [int(n) for n in sizes.split(",")]
    sizes = ",".join(str(n) for n in sorted({min(numbers), max(numbers)}))
    timed = ["--steps", STEPS, "--reps", str(reps)]
    out = [("runs", f"{bc} boundaries, {p}, N = {sizes}", ["--n", sizes, *timed, "--bc", bc, "--precision", p])
           for bc in BOUNDARIES for p in PRECISIONS]
    out.append(("overhead", f"launch overhead with and without a CUDA graph, N = {OVERHEAD_SIZES}",
                ["--n", OVERHEAD_SIZES, *timed, "--bc", "dirichlet", "--precision", "float"]))
    out += [("accuracy", f"order of accuracy, {p}, N = {ACCURACY_SIZES}",
             ["--n", ACCURACY_SIZES, "--t-end", T_END, "--check-only", "--bc", "dirichlet", "--precision", p])
            for p in PRECISIONS]
    out.append(("snapshots", f"{SNAPSHOTS} pictures of the middle plane, N = {SNAPSHOT_SIZE}",
                ["--n", SNAPSHOT_SIZE, "--t-end", T_END, "--snapshots", SNAPSHOTS, "--check-only",
                 "--bc", "dirichlet", "--precision", "float"]))
    out.append(("jacobi", f"Jacobi iteration for the steady state, N = {JACOBI_SIZES}",
                ["--jacobi", "--n", JACOBI_SIZES, "--precision", "double"]))
    return out


def measure(program, sizes, reps, tmp):
    """Runs `program` (stage 07's solution) for every job; returns the "heat" section. `sizes` is
    the bench's --n text, `tmp` a folder for the programs' JSON lines."""
    heat = {"runs": [], "overhead": [], "accuracy": [], "snapshots": None, "jacobi": []}
    todo = jobs(sizes, reps)
    for number, (part, what, options) in enumerate(todo, 1):
        say(f"[07 {number}/{len(todo)}] the heat equation: {what}")
        out = tmp / f"heat_{number}.jsonl"
        failure = "did not converge" if part == "jacobi" else "gave wrong results"
        run_program([program, *options, "--json", out], f"stage 07 ({what})", failure)
        records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        if not records:
            say(f"  stage 07 ({what}) wrote no results")
        elif part == "snapshots":
            heat["snapshots"] = records[-1]
        else:
            heat[part] += records
    return heat


def fused_jobs(reps):
    """(stage, what, the program's options) for stage 08's comparison: stage 07, then stage 08 for
    each S, float and Dirichlet, the same sizes and steps (a multiple of every S)."""
    timed = ["--n", FUSED_SIZES, "--steps", FUSED_STEPS, "--reps", str(reps), "--bc", "dirichlet",
             "--precision", "float"]
    out = [("07", f"one step per pass, N = {FUSED_SIZES}", timed)]
    out += [("08", f"S = {s} steps per pass, N = {FUSED_SIZES}", [*timed, "--fuse", str(s)]) for s in FUSED_S]
    return out


def measure_fused(program07, program08, reps, tmp):
    """Runs fused_jobs with the two stages' solution programs; returns the records for
    doc["heat"]["fused"]."""
    records = []
    todo = fused_jobs(reps)
    for number, (stage, what, options) in enumerate(todo, 1):
        say(f"[08 {number}/{len(todo)}] temporal blocking: stage {stage}, {what}")
        out = tmp / f"fused_{number}.jsonl"
        run_program([program07 if stage == "07" else program08, *options, "--json", out], f"stage {stage} ({what})",
                    "gave wrong results")
        records += [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return records


def _rows(records, order, head, cells):
    """One line per record in `order`: head(r), then cells(r), or "check FAILED" (no timings)."""
    for r in sorted(records, key=order):
        say(f"{head(r)}  check FAILED" if not r["check"]["ok"] else f"{head(r)} {cells(r)}")


def summary(heat):
    say("\nStage 07, the heat equation: one step from DRAM; % copy = effective bandwidth / a device copy of the "
        "grid;\nanalytic error = max |u - exact| / max |exact| after the steps")
    say(f"{'bc':10} {'precision':9} {'N':>5} {'ms/step':>9} {'G upd/s':>8} {'% copy':>7} {'analytic err':>12}")
    _rows(heat["runs"], lambda r: (BOUNDARIES.index(r["bc"]), PRECISIONS.index(r["precision"]), r["n"]),
          lambda r: f"{r['bc']:10} {r['precision']:9} {r['n']:5d}",
          lambda r: f"{r['step_ms']['median']:9.4f} {r['updates_per_s'] * 1e-9:8.2f} "
                    f"{100 * r['fraction_of_copy']:6.1f}% {r['analytic_error']:12.2e}")
    if heat["overhead"]:
        say(f"\nlaunch overhead, µs per step: a loop of {STEPS} launches, the same loop as one CUDA graph, "
            "and one step alone (from DRAM)")
        say(f"{'N':>5} {'loop':>8} {'graph':>8} {'one step':>9}")
        _rows(heat["overhead"], lambda r: r["n"], lambda r: f"{r['n']:5d}",
              lambda r: f"{r['loop_us_per_step']:8.2f} {r['graph_us_per_step']:8.2f} "
                        f"{r['step_ms']['median'] * 1e3:9.2f}")
    if heat.get("fused"):
        say(f"\nStage 08, temporal blocking: the loop of {FUSED_STEPS} steps, float, Dirichlet; G cell-updates/s "
            "and the speed against stage 07 in the same run")
        say(f"{'stage':>5} {'S':>3} {'N':>5} {'G upd/s':>8} {'vs 07':>6}")
        base = {r["n"]: loop_rate(r) for r in heat["fused"] if r["stage"].startswith("07") and r["check"]["ok"]}
        _rows(heat["fused"], lambda r: (r["n"], r["stage"], r.get("fused_steps", 1)),
              lambda r: f"{r['stage'][:2]:>5} {r.get('fused_steps', 1):3d} {r['n']:5d}",
              lambda r: f"{loop_rate(r) * 1e-9:8.1f} "
                        + (f"{loop_rate(r) / base[r['n']]:5.2f}x" if r["n"] in base else f"{'-':>6}"))
    if heat["jacobi"]:
        say("\nJacobi iteration for ∇²u = f: iterations to the tolerance, and what cos(πh)^k predicts")
        say(f"{'N':>5} {'precision':9} {'iterations':>10} {'predicted':>9} {'error':>9}")
        for r in sorted(heat["jacobi"], key=lambda r: (r["precision"], r["n"])):
            state = "" if r["converged"] else ("  STALLED" if r["stalled"] else "  NOT CONVERGED")
            error = "-" if r["error"] is None else f"{r['error']:.2e}"  # null: not finite
            say(f"{r['n']:5d} {r['precision']:9} {r['iterations']:10d} {r['predicted_iterations']:9.0f} "
                f"{error:>9}{state}")
