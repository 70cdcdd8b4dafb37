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
"""
import json
import tempfile
from pathlib import Path

from figures import STAGE_COLORS, heading, pyplot, save, subtitle
from results_schema import SWEEP_SCHEMA, ResultsError, validate_sweep

SWEEP_STAGES = ("02_basic_sweep", "06_roofline")
LOW, HIGH, STEP = 64, 1024, 32
CHECK_UP_TO = 256
TARGET = 0.88  # the share of the copy stage 06 should reach at every N from 256 on
TARGET_FROM = 256


def sweep_sizes(low=LOW, high=HIGH, step=STEP):
    """Every step-th N from low to high and its neighbours N-1, N+1, N+2, within [low, high]."""
    sizes = {m + d for m in range(low, high + 1, step) for d in (-1, 0, 1, 2)}
    return sorted(n for n in sizes if low <= n <= high)


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


def run_sweep(root, build, reps, environment, slug, results_dir, figures_dir, say, run_program):
    """The whole `bench --sweep`: measure, validate, write the results file, draw the figure."""
    doc = {"schema": SWEEP_SCHEMA, "gpu": None, **environment, "checked_up_to": CHECK_UP_TO, "points": []}
    sizes = sweep_sizes()
    with tempfile.TemporaryDirectory() as tmp:
        doc["points"] = measure(build, sizes, reps, Path(tmp), say, run_program)
        first = json.loads((Path(tmp) / f"{SWEEP_STAGES[0]}-time.jsonl").read_text().splitlines()[0])
        doc["gpu"] = first["device"]
    validate_sweep(doc)
    folder = results_dir / "sweep"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{slug(doc['gpu'])}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    say(f"\nwrote {path.relative_to(root) if path.is_relative_to(root) else path}")
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
    return "\n".join(lines)


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
