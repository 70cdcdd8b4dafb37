"""The sweep: stages 02 and 06 at every N from 64 to 1024, as a % of a device-to-device copy.

Run through `python3 course.py bench --sweep [--reps 20]`. Every 32nd N and its neighbours N-1,
N+1, N+2, so that every remainder of N modulo 4 (aligned rows or not) shows up all along. Each
stage's solution is checked against the CPU reference at every swept N up to CHECK_UP_TO (the
reference is slow at large N; the gpu test suite checks larger ones), then timed at every N
with --time-only (random input made on the GPU, no CPU reference). The results go to a file of
their own, plots/results/sweep/<gpu>.json (schema in results_schema.py), so that the sweep and
the ordinary benchmark (plots/results/<gpu>.json) never overwrite each other; the figure to
plots/figures/<gpu>/sweep.png. The CuPy/PyTorch alternatives are left out: at 120 sizes up to
N = 1024 they would take many minutes (`course.py bench` times them at its sizes).

Then (unless --no-heat) the time-stepping stages, into the same file's optional "heat" part:
stage 07, and stage 08 at each S of HEAT_FUSE_CHOICES (steps fused per pass), for each boundary
condition in float and in half (a series whose options the program refuses with exit 2 is
recorded as not supported). Each series is checked once with --check-only at HEAT_CHECK_SIZES (a
failed check stops it: recorded as failed, not plotted), then timed with --time-only at every N of
sweep_sizes(HEAT_LOW, HIGH). Stage 08's speed-up is its cell-updates/s over stage 07's (same
boundaries, same N, this run); best_fused takes its best S at each N, as a learner would choose S
for their N, and the summary and the figure sweep_heat.png show that. `bench --sweep --only-heat`
(run_heat_only) measures this part alone, into an existing sweep file, with its own date and
commit (heat.run).

Then (unless --no-high-order) stage 10's fast kernel at every order R = 1..4, into the optional
"high_order" part: checked once at HIGH_ORDER_CHECK_SIZES, then timed at every N of
high_order_sizes() (255 to 1026). `bench --sweep --only-10` (run_high_order_only) measures it
alone, as --only-heat does the heat part; lesson 10's tables of every N are made from it.
"""
import json
import tempfile
from pathlib import Path

from common import BenchStopped
from figures import STAGE_COLORS, heading, not_drawn, pyplot, save, subtitle
from heat_plot import best_fused, best_s_wins
from lesson_tables import after_writing
from results_schema import RATES, SWEEP_SCHEMA, TIMING_STATS, ResultsError, validate_sweep

SWEEP_STAGES = ("02_basic_sweep", "06_roofline")
LOW, HIGH, STEP = 64, 1024, 32
CHECK_UP_TO = 256
TARGET = 0.88  # the share of the copy stage 06 should reach at every N from 256 on
TARGET_FROM = 256


# The time-stepping stages (the file's "heat" part).
HEAT_STAGE, FUSED_STAGE = "07_heat_equation", "08_temporal_blocking"
HEAT_LOW = 256
HEAT_CHECK_SIZES = (256, 257, 258, 259)  # every remainder of N modulo 4, checked once per series
# Stage 08's S (steps fused per pass): which is best depends on N, boundaries and precision
# (plots/results/runs/stage08_best_s-*.json: S = 3 to 6 each win somewhere from N = 256 to 514).
HEAT_FUSE_CHOICES = (3, 4, 5, 6)
SPEEDUP_GOAL = 2.0  # stage 08 over stage 07
# (stage, bc, precision, S) of every series, in order: stage 07's first (stage 08 divides by them).
HEAT_SERIES = ([(HEAT_STAGE, bc, precision, 1) for precision in ("float", "half")
                for bc in ("dirichlet", "neumann", "periodic")]
               + [(FUSED_STAGE, bc, precision, fuse) for precision in ("float", "half")
                  for bc in ("dirichlet", "neumann", "periodic") for fuse in HEAT_FUSE_CHOICES])
# For the estimate printed before the heat part (an H100): --time-only, per size per series;
# each check (four sizes with the CPU reference). The 30 series of b6312e1's run took 16 minutes.
HEAT_TIME_S_PER_SIZE, HEAT_CHECK_S = 0.3, 3.0


# Stage 10's fast kernel (the file's "high_order" part).
HIGH_ORDER_STAGE = "10_high_order"
HIGH_ORDER_ORDERS = "1,2,3,4"
HIGH_ORDER_CHECK_SIZES = (255, 256, 257, 258)  # every remainder of N modulo 4, at every order


def high_order_sizes():
    """Every 32nd N from 256 to 1024 and all its neighbours N-1, N+1, N+2: 255 to 1026, 100 sizes."""
    return sweep_sizes(HEAT_LOW, HIGH, neighbours_outside=True)


def heat_steps(stage, fuse):
    """Steps a run times: stage 07 two; stage 08 two passes of S (fuse) steps."""
    return 2 * fuse if stage == FUSED_STAGE else 2


def sweep_sizes(low=LOW, high=HIGH, step=STEP, neighbours_outside=False):
    """Every step-th N from low to high and its neighbours N-1, N+1, N+2, within [low, high] (or
    all of them, neighbours_outside)."""
    sizes = {m + d for m in range(low, high + 1, step) for d in (-1, 0, 1, 2)}
    return sorted(n for n in sizes if neighbours_outside or low <= n <= high)


def measure(build, sizes, reps, tmp, say, run_program):
    """Runs the check and the timing of each stage; returns the points (as validate_sweep wants).
    run_program is bench.run_program: True when the program passed, False when it exited 1
    (recorded), BenchStopped for anything else."""
    checked = [n for n in sizes if n <= CHECK_UP_TO]
    points = []
    for number, stage in enumerate(SWEEP_STAGES, 1):
        program = build / f"stage_{stage}_solution"
        if not program.exists():
            raise ResultsError(f"{program} is missing: build the course first (python3 course.py test builds it)")
        ok = {}
        if checked:
            say(f"[sweep {number}/{len(SWEEP_STAGES)}] {stage}: checking N = {checked[0]}..{checked[-1]} "
                f"({len(checked)} sizes)")
            records = tmp / f"{stage}-check.jsonl"
            run_program([program, "--check-only", "--n", ",".join(map(str, checked)), "--json", records],
                        f"{stage} (sweep check)")
            for line in records.read_text().splitlines():
                r = json.loads(line)
                ok[r["n"]] = r["check"]["ok"]
        say(f"[sweep {number}/{len(SWEEP_STAGES)}] {stage}: timing N = {sizes[0]}..{sizes[-1]} "
            f"({len(sizes)} sizes, {reps} repetitions each)")
        records = tmp / f"{stage}-time.jsonl"
        run_program([program, "--time-only", "--n", ",".join(map(str, sizes)), "--reps", reps, "--json", records],
                    f"{stage} (sweep timing)")
        for line in records.read_text().splitlines():
            r = json.loads(line)
            n = r["n"]
            check = {"checked": n in ok, **({"ok": ok[n]} if n in ok else {})}
            if n <= CHECK_UP_TO and n not in ok:  # the check stopped early: say so, do not pretend
                check = {"checked": True, "ok": False}
            points.append({"stage": r["stage"], "implementation": r["implementation"], "n": n, "check": check,
                           **{k: r[k] for k in ("time_ms", "copy_ms", "points_per_s", "gflops", "gbps",
                                                "copy_gbps", "fraction_of_copy")}})
    return points


def heat_options(stage, bc, precision, fuse):
    """The options that fix a series' problem: boundaries, precision, steps (and S for stage 08)."""
    fused = ["--fuse", str(fuse)] if stage == FUSED_STAGE else []
    return [*fused, "--steps", str(heat_steps(stage, fuse)), "--bc", bc, "--precision", precision]


def heat_seconds(sizes):
    """About how long the heat part takes on an H100 (HEAT_TIME_S_PER_SIZE, HEAT_CHECK_S)."""
    return len(HEAT_SERIES) * (HEAT_CHECK_S + HEAT_TIME_S_PER_SIZE * len(sizes))


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def measure_heat(build, sizes, reps, tmp, say, run_program):
    """Stages 07 and 08: each series of HEAT_SERIES checked at HEAT_CHECK_SIZES, then timed at
    `sizes` with --time-only; returns the file's "heat" part (as validate_sweep wants) and the
    GPU's name as the programs reported it (None if no series was timed)."""
    for stage in (HEAT_STAGE, FUSED_STAGE):
        if not (build / f"stage_{stage}_solution").exists():
            raise ResultsError(f"{build / f'stage_{stage}_solution'} is missing: build the course first "
                               "(python3 course.py test builds it), or leave the heat part out with --no-heat")
    say(f"\n[sweep heat] stages 07 and 08: {len(HEAT_SERIES)} series, each checked at N = "
        f"{','.join(map(str, HEAT_CHECK_SIZES))}, then timed at N = {sizes[0]}..{sizes[-1]} ({len(sizes)} sizes, "
        f"{reps} repetitions each): about {heat_seconds(sizes) / 60:.0f} minutes on an H100")
    series, device = [], None
    for number, (stage, bc, precision, fuse) in enumerate(HEAT_SERIES, 1):
        program = build / f"stage_{stage}_solution"
        problem = heat_options(stage, bc, precision, fuse)
        what = f"stage {stage[:2]}, {bc}, {precision}" + (f", S = {fuse}" if stage == FUSED_STAGE else "")
        entry = {"stage": stage, "bc": bc, "precision": precision, "fused_steps": fuse,
                 "steps": heat_steps(stage, fuse), "status": "measured", "check": [], "points": []}
        series.append(entry)
        say(f"[sweep heat {number}/{len(HEAT_SERIES)}] {what}: checking N = {','.join(map(str, HEAT_CHECK_SIZES))}")
        out = tmp / f"heat-{number}-check.jsonl"
        try:
            ok = run_program([program, "--check-only", "--n", ",".join(map(str, HEAT_CHECK_SIZES)), *problem,
                              "--json", out], f"{what} (sweep check)")
        except BenchStopped as e:
            if "exit 2" in str(e):
                entry.update(status="not supported",
                             note=f"stage {stage[:2]} refused --bc {bc} --precision {precision} (exit 2)")
                say(f"  {what}: not supported (the program refused it); recorded as such")
                continue
            raise
        got = _records(out)
        entry["check"] = [{"n": r["n"], "ok": bool(r["check"]["ok"]), "max_err": r["check"].get("max_err")}
                          for r in got]
        if not ok or not got or not all(c["ok"] for c in entry["check"]):
            entry.update(status="failed", note="its check failed: not timed")
            say(f"  {what}: the check failed; this series stops here (recorded, not plotted)")
            continue
        say(f"[sweep heat {number}/{len(HEAT_SERIES)}] {what}: timing N = {sizes[0]}..{sizes[-1]} "
            f"({len(sizes)} sizes, --time-only)")
        out = tmp / f"heat-{number}-time.jsonl"
        ok = run_program([program, "--time-only", "--n", ",".join(map(str, sizes)), *problem, "--reps", reps,
                          "--json", out], f"{what} (sweep timing)")
        got = _records(out)
        if not ok or not got:
            entry.update(status="failed", note="the --time-only run failed")
            continue
        device = device or got[0].get("device")
        for r in got:
            point = {"n": r["n"], **{k: r[k] for k in ("step_ms", "copy_ms", "updates_per_s", "gbps", "copy_gbps",
                                                      "fraction_of_copy")}}
            if r.get("loop_ms"):
                point["loop_ms"] = r["loop_ms"]
            entry["points"].append(point)
    # Stage 08's speed-up over stage 07 at the same N, same boundaries and precision, this run.
    base = {(s["bc"], s["precision"]): {p["n"]: p["updates_per_s"] for p in s["points"]}
            for s in series if s["stage"] == HEAT_STAGE}
    for s in series:
        if s["stage"] == FUSED_STAGE:
            rates = base.get((s["bc"], s["precision"]), {})
            for p in s["points"]:
                p["speedup_over_07"] = p["updates_per_s"] / rates[p["n"]] if p["n"] in rates else None
    return {"sizes": list(sizes), "reps": int(reps), "series": series}, device


def measure_high_order(build, sizes, reps, tmp, say, run_program):
    """Stage 10's fast kernel at every order: checked at HIGH_ORDER_CHECK_SIZES, then timed at
    `sizes` with --time-only; returns the file's "high_order" part and the GPU's name."""
    program = build / f"stage_{HIGH_ORDER_STAGE}_solution"
    if not program.exists():
        raise ResultsError(f"{program} is missing: build the course first (python3 course.py test builds it), "
                           "or leave stage 10 out with --no-high-order")
    kernel = ["--kernel", "fast", "--order", HIGH_ORDER_ORDERS]
    checks = ",".join(map(str, HIGH_ORDER_CHECK_SIZES))
    say(f"\n[sweep 10] stage 10's fast kernel, R = {HIGH_ORDER_ORDERS}: checking N = {checks}")
    out = tmp / "high-order-check.jsonl"
    ok = run_program([program, "--check-only", *kernel, "--n", checks, "--json", out], "stage 10 (sweep check)")
    if not ok or not all(r["check"]["ok"] for r in _records(out)):
        raise ResultsError("stage 10's fast kernel failed its check: not timed (run it with "
                           f"`python3 course.py run 10 --solution --kernel fast --n {checks}` to see where)")
    say(f"[sweep 10] timing N = {sizes[0]}..{sizes[-1]} ({len(sizes)} sizes, {len(HIGH_ORDER_ORDERS.split(','))} orders, {reps} repetitions each)")
    out = tmp / "high-order-time.jsonl"
    run_program([program, "--time-only", *kernel, "--n", ",".join(map(str, sizes)), "--reps", reps, "--json", out],
                "stage 10 (sweep timing)")
    got = _records(out)
    if not got:
        raise ResultsError("stage 10's --time-only run wrote no record")
    points = [{"order": r["order"], "n": r["n"], "planes_per_chunk": r["tile"]["z_coarsening"],
               **{k: r[k] for k in TIMING_STATS + RATES}} for r in got]
    return {"sizes": list(sizes), "reps": int(reps), "checked_at": list(HIGH_ORDER_CHECK_SIZES),
            "points": points}, got[0]["device"]


def run_sweep(root, build, reps, environment, slug, results_dir, figures_dir, say, run_program, heat=True,
              high_order=True):
    """The whole `bench --sweep`: measure, validate, write the results file, draw the figures.
    heat: also stages 07 and 08 (measure_heat); False with --no-heat. high_order: also stage 10
    (measure_high_order); False with --no-high-order."""
    doc = {"schema": SWEEP_SCHEMA, "gpu": None, **environment, "checked_up_to": CHECK_UP_TO, "points": []}
    sizes = sweep_sizes()
    with tempfile.TemporaryDirectory() as tmp:
        doc["points"] = measure(build, sizes, reps, Path(tmp), say, run_program)
        first = json.loads((Path(tmp) / f"{SWEEP_STAGES[0]}-time.jsonl").read_text().splitlines()[0])
        doc["gpu"] = first["device"]
        if heat:
            doc["heat"], _ = measure_heat(build, sweep_sizes(HEAT_LOW, HIGH), reps, Path(tmp), say, run_program)
        if high_order:
            doc["high_order"], _ = measure_high_order(build, high_order_sizes(), reps, Path(tmp), say, run_program)
    return _write(doc, root, slug, results_dir, figures_dir, say)


def run_heat_only(root, build, reps, environment, slug, results_dir, figures_dir, say, run_program, load):
    """`bench --sweep --only-heat`: the heat part again (measure_heat), in place of the old one in
    this GPU's sweep file, with its own date and commit (heat.run); the other parts stay as they
    were. load: results_schema.load_sweep."""
    return _run_part_only("heat", "stages 07 and 08", lambda tmp: measure_heat(
        build, sweep_sizes(HEAT_LOW, HIGH), reps, tmp, say, run_program),
        root, environment, slug, results_dir, figures_dir, say, load)


def run_high_order_only(root, build, reps, environment, slug, results_dir, figures_dir, say, run_program, load):
    """`bench --sweep --only-10`: the high_order part again (measure_high_order), as run_heat_only."""
    return _run_part_only("high_order", "stage 10", lambda tmp: measure_high_order(
        build, high_order_sizes(), reps, tmp, say, run_program),
        root, environment, slug, results_dir, figures_dir, say, load)


def _run_part_only(part, what, measure_part, root, environment, slug, results_dir, figures_dir, say, load):
    """Measures one part of the sweep file (measure_part(tmp) -> (part, GPU name)) and puts it in
    place of the old one in this GPU's file, with its own date and commit (part.run)."""
    with tempfile.TemporaryDirectory() as tmp:
        measured, device = measure_part(Path(tmp))
    if device is None:
        raise ResultsError(f"nothing of {what} was timed: nothing to write")
    path = results_dir / "sweep" / f"{slug(device)}.json"
    try:
        doc = load(path)
    except (OSError, ValueError, ResultsError) as e:
        raise ResultsError(f"{path} cannot take the new {what} part ({e}): run the whole sweep first "
                           "(python3 course.py bench --sweep)") from None
    doc[part] = {**measured, "run": {k: environment[k] for k in ("date", "commit", "nvcc", "driver")
                                     if environment.get(k) is not None}}
    return _write(doc, root, slug, results_dir, figures_dir, say)


def _write(doc, root, slug, results_dir, figures_dir, say):
    """Validates the sweep, writes plots/results/sweep/<gpu>.json, prints the summary, draws."""
    validate_sweep(doc)
    folder = results_dir / "sweep"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slug(doc['gpu'])}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    say(f"\nwrote {path.relative_to(root) if path.is_relative_to(root) else path}")
    for line in after_writing(root, path):
        say(line)
    say(summary(doc))
    return draw(doc, figures_dir / slug(doc["gpu"]), say)


def summary(doc):
    """The least % of copy of each stage over N >= TARGET_FROM, and where."""
    lines = [f"Sweep - {doc['gpu']}: the least % of copy from N = {TARGET_FROM} on"]
    for stage in sorted({p["stage"] for p in doc["points"]}):
        pts = [p for p in doc["points"] if p["stage"] == stage and p["n"] >= TARGET_FROM]
        if pts:
            worst = min(pts, key=lambda p: p["fraction_of_copy"])
            lines.append(f"  {stage:18} {100 * worst['fraction_of_copy']:5.1f}% at N = {worst['n']}")
    failed = [p for p in doc["points"] if p["check"].get("ok") is False]
    for p in failed:
        lines.append(f"  {p['stage']} FAILED its check at N = {p['n']}")
    if doc.get("heat"):
        lines += heat_summary(doc["heat"])
    if doc.get("high_order"):
        lines += high_order_summary(doc["high_order"])
    return "\n".join(lines)


def high_order_summary(high_order):
    """Stage 10's fast kernel: the least % of copy of each order over the sizes, and where."""
    lines = ["  stage 10, fast kernel (% of copy):"]
    for R in sorted({p["order"] for p in high_order["points"]}):
        pts = {p["n"]: p["fraction_of_copy"] for p in high_order["points"] if p["order"] == R}
        worst = min(pts, key=pts.get)
        at512 = f", {100 * pts[512]:.1f}% at N = 512" if 512 in pts else ""
        lines.append(f"    R = {R}: least {100 * pts[worst]:.1f}% at N = {worst}{at512}")
    return lines


def series_label(s):
    fuse = f", S = {s['fused_steps']}" if s["fused_steps"] > 1 else ""
    return f"{s['stage'][:2]} {s['bc']} {s['precision']}{fuse}"


def best_label(bc, precision, pts):
    """'08 dirichlet float, best S: 4 at 60 N, 3 at 12 N, ...' (the most often best first)."""
    return f"08 {bc} {precision}, best S: " + ", ".join(f"{S} at {n} N" for S, n in best_s_wins(pts).items())


def heat_summary(heat):
    """The least % of copy of each stage 07 series, the least speed-up of each stage 08 one and of
    stage 08 at its best S, with their N; the series that failed or are not supported."""
    lines = [f"Stages 07 and 08, N = {heat['sizes'][0]}..{heat['sizes'][-1]}: the least value of each series"]
    for s in heat["series"]:
        label = series_label(s)
        if s["status"] != "measured":
            lines.append(f"  {label:28} {s['status'].upper()}" + (f": {s['note']}" if s.get("note") else ""))
        elif s["stage"] == FUSED_STAGE:
            pts = [p for p in s["points"] if p.get("speedup_over_07") is not None]
            if pts:
                worst = min(pts, key=lambda p: p["speedup_over_07"])
                lines.append(f"  {label:28} {worst['speedup_over_07']:5.2f}x over stage 07 at N = {worst['n']}")
            else:
                lines.append(f"  {label:28} no stage 07 points to compare against")
        else:
            worst = min(s["points"], key=lambda p: p["fraction_of_copy"])
            lines.append(f"  {label:28} {100 * worst['fraction_of_copy']:5.1f}% of copy at N = {worst['n']}")
    best = best_fused(heat)
    if best:
        lines.append("Stage 08 at its best S at each N (the least over N of the best speed-up):")
    for (bc, precision), pts in best.items():
        worst = min(pts, key=lambda p: p["speedup_over_07"])
        lines.append(f"  {best_label(bc, precision, pts)}: {worst['speedup_over_07']:.2f}x over stage 07 at "
                     f"N = {worst['n']} (S = {worst['fused_steps']})")
    return lines


def draw(doc, out_dir, say):
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        say(f"cannot draw the sweep: {e} (python3 -m pip install -r requirements.txt)")
        return 1
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = draw_sweep(doc, out_dir / "sweep.png")
    say(f"  wrote {path}")
    heat = doc.get("heat")
    if heat and any(s["status"] == "measured" for s in heat["series"]):
        say(f"  wrote {draw_sweep_heat(doc, out_dir / 'sweep_heat.png')}")
    else:
        not_drawn([out_dir / "sweep_heat.png"], "no stage 07 or 08 series measured in this sweep" if heat
                  else "no heat part in this sweep (--no-heat, or an older file)", say)
    return 0


# --- the figure -----------------------------------------------------------------------------------

def draw_sweep(doc, path):
    """% of copy against N, one line per stage; filled markers where N is a multiple of 4 (rows
    start on 16-byte boundaries), hollow where not; a cross where the check failed. Below, the
    copy's own GB/s, which the percentages divide by."""
    validate_sweep(doc)
    plt = pyplot()
    fig, (ax, axc) = plt.subplots(2, 1, figsize=(14, 8.2), sharex=True, layout="constrained",
                                  gridspec_kw={"height_ratios": [3.2, 1]})
    titles = {"02_basic_sweep": "02 Basic sweep", "06_roofline": "06 Streaming at the roofline"}
    stages = sorted({p["stage"] for p in doc["points"]})
    for stage in stages:
        color = STAGE_COLORS[(int(stage[:2]) - 2) % len(STAGE_COLORS)]
        pts = sorted((p for p in doc["points"] if p["stage"] == stage and p["implementation"] == "solution"),
                     key=lambda p: p["n"])
        good = [p for p in pts if p["check"].get("ok") is not False]
        ns = [p["n"] for p in good]
        ys = [100 * p["fraction_of_copy"] for p in good]
        label = titles.get(stage, stage)
        tail = [p for p in good if p["n"] >= TARGET_FROM]
        if tail:
            worst = min(tail, key=lambda p: p["fraction_of_copy"])
            label += f"  (least from N = {TARGET_FROM}: {100 * worst['fraction_of_copy']:.1f}% at N = {worst['n']})"
            above = stage == stages[-1]  # the upper line's label above it, the lower one's below
            ax.annotate(f"{100 * worst['fraction_of_copy']:.1f}%\nN = {worst['n']}",
                        xy=(worst["n"], 100 * worst["fraction_of_copy"]), xytext=(14, 34 if above else -30),
                        textcoords="offset points", ha="left" if above else "center", va="bottom" if above else "top",
                        fontsize=9, color=color,
                        arrowprops=dict(arrowstyle="-", color=color, linewidth=0.8))
        ax.plot(ns, ys, color=color, linewidth=1.2, zorder=3, label=label)
        aligned = [(n, y) for n, y in zip(ns, ys) if n % 4 == 0]
        other = [(n, y) for n, y in zip(ns, ys) if n % 4 != 0]
        if aligned:
            ax.scatter(*zip(*aligned), s=16, color=color, zorder=4)
        if other:
            ax.scatter(*zip(*other), s=16, facecolors="white", edgecolors=color, linewidths=1.0, zorder=4)
        bad = [p for p in pts if p["check"].get("ok") is False]
        if bad:
            ax.scatter([p["n"] for p in bad], [100 * p["fraction_of_copy"] for p in bad], marker="x", s=60,
                       color="#b00020", zorder=5, label=f"{titles.get(stage, stage)}: check failed")
    copy = {}
    for p in doc["points"]:
        copy.setdefault(p["n"], p["copy_gbps"])
    cn = sorted(copy)
    axc.plot(cn, [copy[n] for n in cn], color="0.3", linewidth=1.2)
    axc.set_ylabel("copy GB/s")
    axc.set_ylim(0, max(copy.values()) * 1.15)
    axc.grid(color="0.9")
    ax.axhline(100, color="black", linestyle="--", linewidth=1.0, zorder=2)
    ax.axhline(100 * TARGET, color="0.45", linestyle=":", linewidth=1.0, zorder=2)
    ax.axvline(TARGET_FROM, color="0.75", linewidth=0.8, zorder=1)
    # Small grids: the copy of a few MB is slow (launch cost; the grids partly stay in L2), so a
    # kernel can beat it; the goal counts from TARGET_FROM on.
    ax.axvspan(cn[0] - 8, TARGET_FROM, color="0.94", zorder=0)
    ax.text((cn[0] + TARGET_FROM) / 2, 4, f"N < {TARGET_FROM}: grids of a few MB;\nthe copy is slow here, and\n"
            "above 100% the kernel\nbeat a short copy", fontsize=8.5, ha="center", va="bottom", color="0.3")
    ax.text(cn[0], 100.8, "100% = device-to-device copy", fontsize=9, va="bottom")
    ax.text(cn[0], 100 * TARGET + 0.8, f"{100 * TARGET:.0f}%", fontsize=9, va="bottom", color="0.35")
    ax.scatter([], [], s=16, color="0.4", label="filled: N a multiple of 4 (every row 16-byte aligned)")
    ax.scatter([], [], s=16, facecolors="white", edgecolors="0.4", label="hollow: any other N")
    ax.legend(loc="lower right", fontsize=9, frameon=True, framealpha=0.95)
    most = max(100 * p["fraction_of_copy"] for p in doc["points"])  # small N: the copy itself is slow
    ax.set_ylim(0, max(112, min(most * 1.05, 250)))
    ax.set_ylabel("effective bandwidth, % of a device-to-device copy")
    ax.grid(color="0.9")
    axc.set_xlabel(f"grid size N (N × N × N floats): N = {LOW}, {LOW + STEP}, ..., {HIGH} and each N-1, N+1, N+2.  "
                   f"Checked against the CPU reference up to N = {doc['checked_up_to']}, timed with --time-only at every N")
    ax.set_xlim(cn[0] - 8, cn[-1] + 8)
    heading(fig, ax, doc, "Stages 02 and 06 at every grid size: % of a device-to-device copy against N",
            subtitle(doc))
    return save(fig, path, doc, "sweep: % of copy against N")


def _marked_line(ax, pts, key, color, label, marker="o"):
    """One series against N: a line, filled markers where N % 4 == 0, hollow ones elsewhere."""
    ns, ys = [p["n"] for p in pts], [key(p) for p in pts]
    ax.plot(ns, ys, color=color, linewidth=1.2, zorder=3, label=label)
    aligned = [(n, y) for n, y in zip(ns, ys) if n % 4 == 0]
    other = [(n, y) for n, y in zip(ns, ys) if n % 4 != 0]
    if aligned:
        ax.scatter(*zip(*aligned), s=14, color=color, marker=marker, zorder=4)
    if other:
        ax.scatter(*zip(*other), s=14, facecolors="white", edgecolors=color, marker=marker, linewidths=1.0,
                   zorder=4)


HEAT_COLORS = {("dirichlet", "float"): "#1f77b4", ("neumann", "float"): "#2ca02c", ("periodic", "float"): "#d62728",
               ("dirichlet", "half"): "#9467bd", ("neumann", "half"): "#8c564b", ("periodic", "half"): "#ff7f0e"}


def draw_sweep_heat(doc, path):
    """Two panels against N: stage 07's % of copy (one line per boundaries and precision, the
    goal line at TARGET), and stage 08's speed-up over stage 07 at its best S at each N (one line
    per boundaries and precision, best_fused; the legend says how often each S won; the
    SPEEDUP_GOAL line). Filled markers where N % 4 == 0, hollow where not; series that failed
    their check or are not supported are named in the legend, not drawn."""
    validate_sweep(doc)
    heat = doc["heat"]
    plt = pyplot()
    fig, (ax, axs) = plt.subplots(2, 1, figsize=(14, 9.5), sharex=True, layout="constrained")
    for s in heat["series"]:
        color = HEAT_COLORS.get((s["bc"], s["precision"]), "0.3")
        target = ax if s["stage"] == HEAT_STAGE else axs
        label = series_label(s)
        if s["status"] != "measured":
            target.plot([], [], color=color, linestyle="none", marker="x",
                        label=f"{label}: {s['status']}" + (" (check failed)" if s["status"] == "failed" else ""))
            continue
        if s["stage"] == HEAT_STAGE:
            worst = min(s["points"], key=lambda p: p["fraction_of_copy"])
            _marked_line(ax, s["points"], lambda p: 100 * p["fraction_of_copy"], color,
                         f"{label}  (least {100 * worst['fraction_of_copy']:.1f}% at N = {worst['n']})")
    for (bc, precision), pts in best_fused(heat).items():
        worst = min(pts, key=lambda p: p["speedup_over_07"])
        _marked_line(axs, pts, lambda p: p["speedup_over_07"], HEAT_COLORS.get((bc, precision), "0.3"),
                     f"{best_label(bc, precision, pts)}  (least {worst['speedup_over_07']:.2f}x at N = {worst['n']})",
                     marker="s")
    ns = heat["sizes"]
    ax.axhline(100, color="black", linestyle="--", linewidth=1.0, zorder=2)
    ax.axhline(100 * TARGET, color="0.45", linestyle=":", linewidth=1.2, zorder=2)
    ax.text(ns[-1], 100 * TARGET + 0.8, f"goal {100 * TARGET:.0f}%", fontsize=9, va="bottom", ha="right", color="0.35")
    ax.text(ns[0], 100.8, "100% = device-to-device copy", fontsize=9, va="bottom")
    most = max([100 * p["fraction_of_copy"] for s in heat["series"] if s["stage"] == HEAT_STAGE
                for p in s["points"]] or [100])
    ax.set_ylim(0, max(112, min(most * 1.05, 250)))
    ax.set_ylabel(f"stage 07: one step, % of a device copy\n(--steps {heat_steps(HEAT_STAGE, 1)}, --time-only)")
    ax.scatter([], [], s=14, color="0.4", label="filled: N a multiple of 4")
    ax.scatter([], [], s=14, facecolors="white", edgecolors="0.4", label="hollow: any other N")
    ax.legend(loc="lower right", fontsize=9, frameon=True, framealpha=0.95)
    ax.grid(color="0.9")
    axs.axhline(1, color="black", linestyle="--", linewidth=1.0, zorder=2)
    axs.axhline(SPEEDUP_GOAL, color="0.45", linestyle=":", linewidth=1.2, zorder=2)
    axs.text(ns[-1], SPEEDUP_GOAL + 0.03, f"goal {SPEEDUP_GOAL:g}x", fontsize=9, va="bottom", ha="right",
              color="0.35")
    axs.text(ns[0], 1.03, "1x = stage 07", fontsize=9, va="bottom")
    top = max([p["speedup_over_07"] for s in heat["series"] for p in s["points"]
               if p.get("speedup_over_07") is not None] or [SPEEDUP_GOAL])
    axs.set_ylim(0, max(SPEEDUP_GOAL * 1.25, top * 1.1))
    tried = sorted({s["fused_steps"] for s in heat["series"] if s["stage"] == FUSED_STAGE})
    axs.set_ylabel(f"stage 08 at its best S ({', '.join(map(str, tried))}):\ncell-updates/s over stage 07's "
                   "at the same N")
    if axs.get_legend_handles_labels()[0]:
        axs.legend(loc="lower right", fontsize=9, frameon=True, framealpha=0.95)
    axs.grid(color="0.9")
    checked = sorted({c["n"] for s in heat["series"] for c in s["check"]})
    axs.set_xlabel(f"grid size N: N = {ns[0]}..{ns[-1]}, every {STEP}th N and each N-1, N+1, N+2.\nEach series "
                   f"checked against the CPU reference at N = {', '.join(map(str, checked)) or '-'}, "
                   f"timed with --time-only at every N ({heat['reps']} repetitions)")
    ax.set_xlim(ns[0] - 8, ns[-1] + 8)
    heading(fig, ax, doc, "Stages 07 and 08 at every grid size: % of copy, and temporal blocking's speed-up",
            subtitle({**doc, **(heat.get("run") or {})}))
    return save(fig, path, doc, "sweep: stages 07 and 08 against N")
