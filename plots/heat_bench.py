"""Stage 07 in the benchmark: the heat equation's speed, its launch overhead, its order of
accuracy, pictures of it, and Jacobi's iteration counts, all from the stage's solution program.

bench.py calls measure() after the one-sweep stages and stores what it returns as doc["heat"]
(the section is checked by results_schema.py and drawn by heat_plot.py); summary() prints its
table. A run that exits 1 (a wrong result, or Jacobi not converging) is recorded and reported,
not plotted; any other failure stops the bench (BenchStopped)."""
import json

from common import run_program, say, unchecked
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
FUSED_CHECK_SIZE = "128"  # the quick bench checks each S here (--check-only), then times with --time-only
# And every other boundary condition and precision: stage 08 at S = FUSED_PAIR_S against stage 07
# with the same ones, at N = FUSED_PAIR_SIZE, each checked at FUSED_CHECK_SIZE first.
FUSED_PAIR_S, FUSED_PAIR_SIZE = 4, "512"


def jobs(sizes, reps, quick=False, overhead_reps=None):
    """(part of the section, what it measures, the program's options) for every run, in order.
    The rates are measured at the smallest and the largest of the bench's sizes: 12 boundary and
    precision pairs at every size would make stage 07 most of the bench's time. quick (the
    default bench): each pair checked and timed at the smallest size, then timed with --time-only
    at the largest (no CPU reference there); overhead_reps: the launch overhead's repetitions
    (default: reps)."""
    numbers = sorted({int(n) for n in sizes.split(",")})
    ends = sorted({numbers[0], numbers[-1]})
    timed = ["--steps", STEPS, "--reps", str(reps)]
    out = []
    for bc in BOUNDARIES:
        for p in PRECISIONS:
            problem = ["--bc", bc, "--precision", p]
            if quick and len(ends) > 1:
                out.append(("runs", f"{bc} boundaries, {p}, N = {ends[0]}", ["--n", str(ends[0]), *timed, *problem]))
                out.append(("runs", f"{bc} boundaries, {p}, N = {ends[-1]} (--time-only)",
                            ["--n", str(ends[-1]), *timed, *problem, "--time-only"]))
            else:
                out.append(("runs", f"{bc} boundaries, {p}, N = {','.join(map(str, ends))}",
                            ["--n", ",".join(map(str, ends)), *timed, *problem]))
    overhead = ["--steps", STEPS, "--reps", str(reps if overhead_reps is None else overhead_reps)]
    out.append(("overhead", f"launch overhead with and without a CUDA graph, N = {OVERHEAD_SIZES}",
                ["--n", OVERHEAD_SIZES, *overhead, "--bc", "dirichlet", "--precision", "float"]))
    # quick: the float run of the accuracy study takes the pictures too (its run at SNAPSHOT_SIZE
    # is the snapshots' run: the same N, end time, boundaries and precision)
    for p in PRECISIONS:
        pictures = quick and p == "float"
        out.append(("accuracy", f"order of accuracy, {p}, N = {ACCURACY_SIZES}"
                    + (f"; {SNAPSHOTS} pictures of the middle plane at N = {SNAPSHOT_SIZE}" if pictures else ""),
                    ["--n", ACCURACY_SIZES, "--t-end", T_END, "--check-only", "--bc", "dirichlet", "--precision", p]
                    + (["--snapshots", SNAPSHOTS] if pictures else [])))
    if not quick:
        out.append(("snapshots", f"{SNAPSHOTS} pictures of the middle plane, N = {SNAPSHOT_SIZE}",
                    ["--n", SNAPSHOT_SIZE, "--t-end", T_END, "--snapshots", SNAPSHOTS, "--check-only",
                     "--bc", "dirichlet", "--precision", "float"]))
    out.append(("jacobi", f"Jacobi iteration for the steady state, N = {JACOBI_SIZES}",
                ["--jacobi", "--n", JACOBI_SIZES, "--precision", "double"]))
    return out


def option(options, name, default=None):
    return options[options.index(name) + 1] if name in options else default


def measure(program, sizes, reps, tmp, quick=False, overhead_reps=None, begin=None):
    """Runs `program` (stage 07's solution) for every job; returns the "heat" section. `sizes` is
    the bench's --n text, `tmp` a folder for the programs' JSON lines. quick: see jobs(); a
    --time-only run follows the checked run of its pair, and is skipped when that run failed.
    begin(number, total): called before each job (the bench's progress)."""
    heat = {"runs": [], "overhead": [], "accuracy": [], "snapshots": None, "jacobi": []}
    todo = jobs(sizes, reps, quick, overhead_reps)
    checked = {}  # (bc, precision) -> (passed, [N]) of the checked run
    for number, (part, what, options) in enumerate(todo, 1):
        say(f"[07 {number}/{len(todo)}] the heat equation: {what}")
        if begin:
            begin(number, len(todo))
        pair = (option(options, "--bc"), option(options, "--precision"))
        time_only = "--time-only" in options
        if time_only and not checked.get(pair, (False,))[0]:
            say(f"  skipped: the check of {pair[0]}, {pair[1]} did not pass")
            continue
        out = tmp / f"heat_{number}.jsonl"
        failure = "did not converge" if part == "jacobi" else "gave wrong results"
        run_program([program, *options, "--json", out], f"stage 07 ({what})", failure)
        records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        if not records:
            say(f"  stage 07 ({what}) wrote no results")
        elif part == "snapshots":
            heat["snapshots"] = records[-1]
        else:
            if part == "runs" and not time_only:
                checked[pair] = (all(r["check"]["ok"] for r in records), [r["n"] for r in records])
            if time_only:
                records = [unchecked(r, True, checked[pair][1]) for r in records]
            if "--snapshots" in options:  # quick: the pictures of the accuracy run at SNAPSHOT_SIZE
                shot = [r for r in records if r["n"] == int(SNAPSHOT_SIZE)]
                heat["snapshots"] = dict(shot[-1]) if shot else None
                records = [{**r, "snapshots": []} for r in records]
            heat[part] += records
    return heat


def fused_jobs(reps, quick=False):
    """(stage, what, the program's options) for stage 08's comparison: stage 07, then stage 08 for
    each S, float and Dirichlet, the same sizes and steps (a multiple of every S). quick (the
    default bench): each first checked at FUSED_CHECK_SIZE with --check-only, then timed at the
    figure's sizes with --time-only. Then, for every other boundary condition and precision, stage
    07 and stage 08 at S = FUSED_PAIR_S, checked at FUSED_CHECK_SIZE and timed at FUSED_PAIR_SIZE
    (quick or not: the CPU reference of 64 steps at N = 512 would take minutes a pair)."""
    def problem(bc, precision):
        return ["--steps", FUSED_STEPS, "--reps", str(reps), "--bc", bc, "--precision", precision]

    def checked_then_timed(stage, what, options, sizes):
        return [(stage, f"{what}, checked at N = {FUSED_CHECK_SIZE}",
                 ["--n", FUSED_CHECK_SIZE, *options, "--check-only"]),
                (stage, f"{what}, N = {sizes} (--time-only)", ["--n", sizes, *options, "--time-only"])]
    out = []
    for stage, fuse in [("07", [])] + [("08", ["--fuse", str(s)]) for s in FUSED_S]:
        what = "one step per pass" if stage == "07" else f"S = {fuse[1]} steps per pass"
        options = [*problem("dirichlet", "float"), *fuse]
        if quick:
            out += checked_then_timed(stage, what, options, FUSED_SIZES)
        else:
            out.append((stage, f"{what}, N = {FUSED_SIZES}", ["--n", FUSED_SIZES, *options]))
    for bc in BOUNDARIES:
        for precision in PRECISIONS:
            if (bc, precision) == ("dirichlet", "float"):
                continue  # above
            for stage, fuse in (("07", []), ("08", ["--fuse", str(FUSED_PAIR_S)])):
                what = ("one step per pass" if stage == "07" else f"S = {FUSED_PAIR_S}") + f", {bc}, {precision}"
                out += checked_then_timed(stage, what, [*problem(bc, precision), *fuse], FUSED_PAIR_SIZE)
    return out


def measure_fused(program07, program08, reps, tmp, quick=False, begin=None):
    """Runs fused_jobs with the two stages' solution programs; returns the records for
    doc["heat"]["fused"] (the --check-only runs of quick are not among them: their verdict is,
    in each timed record's check.ok and checked_at)."""
    records = []
    todo = fused_jobs(reps, quick)
    passed = {}
    for number, (stage, what, options) in enumerate(todo, 1):
        say(f"[08 {number}/{len(todo)}] temporal blocking: stage {stage}, {what}")
        if begin:
            begin(number, len(todo))
        key = (stage, option(options, "--fuse"), option(options, "--bc"), option(options, "--precision"))
        if "--time-only" in options and not passed.get(key, (False,))[0]:
            say(f"  skipped: the check of stage {stage}, {what.split(',')[0]} did not pass")
            continue
        out = tmp / f"fused_{number}.jsonl"
        ok = run_program([program07 if stage == "07" else program08, *options, "--json", out],
                         f"stage {stage} ({what})", "gave wrong results")
        got = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
        if "--check-only" in options:
            passed[key] = (ok and bool(got) and all(r["check"]["ok"] for r in got), [r["n"] for r in got])
        elif "--time-only" in options:
            records += [unchecked(r, True, passed[key][1]) for r in got]
        else:
            records += got
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
                    f"{100 * r['fraction_of_copy']:6.1f}% "
                    + (f"{'-':>12}" if r.get("checked") is False else f"{r['analytic_error']:12.2e}"))
    loose = sorted({r["n"] for r in heat["runs"] if r.get("checked") is False})
    if loose:
        at = sorted({n for r in heat["runs"] for n in r.get("checked_at", [])})
        say(f"(N = {', '.join(map(str, loose))} timed with --time-only: random state made on the GPU, no analytic "
            f"run; each pair checked at N = {', '.join(map(str, at))})")
    if heat["overhead"]:
        say(f"\nlaunch overhead, µs per step: a loop of {STEPS} launches, the same loop as one CUDA graph, "
            "and one step alone (from DRAM)")
        say(f"{'N':>5} {'loop':>8} {'graph':>8} {'one step':>9}")
        _rows(heat["overhead"], lambda r: r["n"], lambda r: f"{r['n']:5d}",
              lambda r: f"{r['loop_us_per_step']:8.2f} {r['graph_us_per_step']:8.2f} "
                        f"{r['step_ms']['median'] * 1e3:9.2f}")
    if heat.get("fused"):
        say(f"\nStage 08, temporal blocking: the loop of {FUSED_STEPS} steps; G cell-updates/s and the speed "
            "against stage 07 (the same boundaries, precision and N) in the same run")
        say(f"{'stage':>5} {'S':>3} {'bc':10} {'precision':9} {'N':>5} {'G upd/s':>8} {'vs 07':>6}")
        def pair(r):
            return r["n"], r["bc"], r["precision"]
        base = {pair(r): loop_rate(r) for r in heat["fused"] if r["stage"].startswith("07") and r["check"]["ok"]}
        _rows(heat["fused"], lambda r: (BOUNDARIES.index(r["bc"]), PRECISIONS.index(r["precision"]), r["n"],
                                        r["stage"], r.get("fused_steps", 1)),
              lambda r: f"{r['stage'][:2]:>5} {r.get('fused_steps', 1):3d} {r['bc']:10} {r['precision']:9} {r['n']:5d}",
              lambda r: f"{loop_rate(r) * 1e-9:8.1f} "
                        + (f"{loop_rate(r) / base[pair(r)]:5.2f}x" if pair(r) in base else f"{'-':>6}"))
    if heat["jacobi"]:
        say("\nJacobi iteration for ∇²u = f: iterations to the tolerance, and what cos(πh)^k predicts")
        say(f"{'N':>5} {'precision':9} {'iterations':>10} {'predicted':>9} {'error':>9}")
        for r in sorted(heat["jacobi"], key=lambda r: (r["precision"], r["n"])):
            state = "" if r["converged"] else ("  STALLED" if r["stalled"] else "  NOT CONVERGED")
            error = "-" if r["error"] is None else f"{r['error']:.2e}"  # null: not finite
            say(f"{r['n']:5d} {r['precision']:9} {r['iterations']:10d} {r['predicted_iterations']:9.0f} "
                f"{error:>9}{state}")
