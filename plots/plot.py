#!/usr/bin/env python3
"""Draws the course's figures from one benchmark results file.

    python3 plots/plot.py RESULTS.json [--out DIR]

writes into DIR (default: this folder, plots/)
    speedup.png      speed-up of every stage over the basic sweep (stage 02), grouped by N
    bandwidth.png    achieved bandwidth as a % of a device-to-device copy, grouped by N
    opb.png          operations per byte: textbook model vs Nsight Compute measurements
    roofline.png     the stages at the largest N under the memory and compute roofs; each at its
                     measured DRAM OP/B (filled) and its textbook OP/B (hollow)
    convergence.png  discretization error vs grid spacing (stage 01), when the file has it
    heat_maps.png, heat_accuracy.png, heat_rates.png, temporal_blocking.png
                     stages 07 and 08, the heat equation, when the file has it (see heat_plot.py)
    high_order.png   stage 10, order R, when the file has it (see high_order_plot.py)
and prints the path of each file written. A file that cannot be plotted gives exit status 2
and one line, "plot.py: <file>: <what is wrong>".

The benchmark calls draw_all(doc, out_dir) on a results dict it has validated.
"""
import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from figures import STAGE_COLORS, grouped_bars, heading, not_drawn, pyplot, save, subtitle  # noqa: E402
from heat_plot import draw_heat  # noqa: E402
from high_order_plot import draw as draw_high_order  # noqa: E402
from results_schema import BASELINE_STAGE, ResultsError, load_results, validate  # noqa: E402

TEXTBOOK_BOUND = 13 / 4  # every input loaded once: 13 FLOP per 4-byte load
ROOF_NEAR = 2  # the roofline shows the compute roof when it is within 2× of the data's view
STAGE_MARKERS = ["o", "s", "^", "v", "p", "h", "*"]  # the roofline's marker per stage (02, 03, ...)
FIGURES = ("speedup.png", "bandwidth.png", "opb.png", "roofline.png", "convergence.png")

ALT_STYLES = [("0.62", "xx"), ("0.80", ".."), ("0.45", "\\\\"), ("0.90", "++")]
EXERCISE_HATCH = "//"


# --- reading the results ----------------------------------------------------------------------

def _stage_number(stage):
    return stage.split("_", 1)[0]


def _timed(doc):
    """Runs that passed their check (validate() guarantees they carry timings)."""
    return [r for r in doc["runs"] if r["check"]["ok"]]


def _stages(doc):
    return sorted({r["stage"] for r in doc["runs"]})


def _colors(doc):
    return {s: STAGE_COLORS[i % len(STAGE_COLORS)] for i, s in enumerate(_stages(doc))}


def _titles(doc):
    """stage -> "02 Basic sweep" (from the runs' titles)."""
    t = {}
    for r in doc["runs"]:
        t.setdefault(r["stage"], f"{_stage_number(r['stage'])} {r['title']}")
    return t


def _baseline_ms(doc):
    """n -> median time of the baseline solution at n."""
    return {r["n"]: r["time_ms"]["median"] for r in _timed(doc)
            if r["stage"] == BASELINE_STAGE and r["implementation"] == "solution"}


def _lighten(color, amount):
    from matplotlib.colors import to_rgb
    r, g, b = to_rgb(color)
    return (r + (1 - r) * amount, g + (1 - g) * amount, b + (1 - b) * amount)


def _mib(n):
    mib = n ** 3 * 4 / 2 ** 20
    return f"{mib:.0f} MiB" if mib >= 1 else f"{n ** 3 * 4 / 1024:.0f} KiB"


# --- grouped bars (speed-up, bandwidth) -------------------------------------------------------

def _series(doc, value_of_run, value_of_alt):
    """The bars of a grouped chart: one series per stage (solution, then the learner's exercise
    beside it), then one per alternative. Each series maps n -> value."""
    colors, titles = _colors(doc), _titles(doc)
    series = []
    for stage in _stages(doc):
        for impl in ("solution", "exercise"):
            values = {r["n"]: value_of_run(r) for r in _timed(doc)
                      if r["stage"] == stage and r["implementation"] == impl}
            failed = {r["n"] for r in doc["runs"]
                      if r["stage"] == stage and r["implementation"] == impl and not r["check"]["ok"]}
            if not values and not failed:
                continue
            c = colors[stage]
            label = titles[stage] + (" (yours)" if impl == "exercise" else "")
            if impl == "solution":
                style = dict(color=c, edgecolor="white", linewidth=0.6)
            else:
                style = dict(color=_lighten(c, 0.6), edgecolor=c, hatch=EXERCISE_HATCH, linewidth=1.0)
            series.append(dict(label=label, values=values, failed=failed, style=style))
    alts = doc.get("alternatives") or []
    names = []
    for a in alts:
        if a["name"] not in names:
            names.append(a["name"])
    for i, name in enumerate(names):
        grey, hatch = ALT_STYLES[i % len(ALT_STYLES)]
        values = {a["n"]: value_of_alt(a) for a in alts if a["name"] == name and a["check"]["ok"]}
        failed = {a["n"] for a in alts if a["name"] == name and not a["check"]["ok"]}
        series.append(dict(label=f"{name} (alternative)", values=values, failed=failed,
                           style=dict(color=grey, edgecolor="0.25", hatch=hatch, linewidth=0.8)))
    return series


def _time_only_note(doc):
    """'' or, when some runs were timed with --time-only (the quick bench), a line that says where."""
    loose = sorted({r["n"] for r in _timed(doc) if r["check"].get("checked") is False})
    if not loose:
        return ""
    at = sorted({n for r in _timed(doc) for n in r.get("checked_at", [])})
    return (f"\nN = {', '.join(map(str, loose))}: timed with --time-only (random input made on the GPU); "
            f"the same programs checked against the CPU reference at N = {', '.join(map(str, at))}")


def _bar_figure(doc, n_bars):
    plt = pyplot()
    width = min(18.0, max(11.0, 6.0 + 0.42 * n_bars))
    return plt.subplots(figsize=(width, 6.4), layout="constrained")


def draw_speedup(doc, path):
    base = _baseline_ms(doc)
    series = _series(doc,
                     lambda r: base[r["n"]] / r["time_ms"]["median"],
                     lambda a: base[a["n"]] / a["time_ms"]["median"])
    ns = sorted({n for s in series for n in (*s["values"], *s["failed"])})
    fig, ax = _bar_figure(doc, sum(len(s["values"]) + len(s["failed"]) for s in series))
    top = grouped_bars(
        ax, series, ns, lambda v: f"{v:.2f}×",
        lambda n: f"N = {n}\n{_mib(n)} per grid\nstage 02: {base[n]:.3g} ms",
        (1.0, "1.0× = as fast as stage 02"))
    ax.set_ylim(0, max(top, 1.0) * 1.22)
    ax.set_ylabel("speed-up over stage 02 at the same N  (×, higher is better)")
    ax.set_xlabel("grid size: N × N × N floats" + _time_only_note(doc))
    heading(fig, ax, doc, "Speed-up of each stage over the basic sweep (time of stage 02 / time of stage)")
    return save(fig, path, doc, "speed-up over stage 02")


def draw_bandwidth(doc, path):
    series = _series(doc, lambda r: 100 * r["fraction_of_copy"], lambda a: 100 * a["fraction_of_copy"])
    ns = sorted({n for s in series for n in (*s["values"], *s["failed"])})
    copy = {n: statistics.median(r["copy_gbps"] for r in _timed(doc) if r["n"] == n)
            for n in ns if any(r["n"] == n for r in _timed(doc))}
    fig, ax = _bar_figure(doc, sum(len(s["values"]) + len(s["failed"]) for s in series))
    top = grouped_bars(
        ax, series, ns, lambda v: f"{v:.0f}%",
        lambda n: f"N = {n}\n{_mib(n)} per grid" + (f"\ncopy: {copy[n]:.0f} GB/s" if n in copy else ""),
        (100, "100% = device-to-device copy"))
    ax.set_ylim(0, max(top, 100) * 1.22)
    ax.set_ylabel("effective bandwidth, % of a device-to-device copy  (higher is better)")
    ax.set_xlabel("grid size: N × N × N floats.  Effective bandwidth counts 8 bytes per interior point "
                  "(one read, one write);\nthe copy is a device-to-device cudaMemcpy of one grid, "
                  "measured in the same run (bytes read + written)." + _time_only_note(doc))
    heading(fig, ax, doc, "Achieved bandwidth as a share of a device-to-device copy")
    return save(fig, path, doc, "bandwidth as a fraction of a device copy")


# --- operations per byte ----------------------------------------------------------------------

def _profile_for(doc, stage, n=None, implementation="solution"):
    """The Nsight Compute profile of `stage` (that implementation): at n if there is one, else at
    the largest n profiled; None without any."""
    ps = [p for p in doc.get("profiles") or [] if p["stage"] == stage and p["implementation"] == implementation]
    if not ps:
        return None
    same = [p for p in ps if p["n"] == n]
    return same[0] if same else max(ps, key=lambda p: p["n"])


def _model_for(doc, stage):
    """The textbook model of a stage (its solution at the largest N, else any run of it)."""
    runs = sorted((r for r in doc["runs"] if r["stage"] == stage),
                  key=lambda r: (r["implementation"] == "solution", r["n"]))
    return runs[-1]["model"]


def draw_opb(doc, path):
    plt = pyplot()
    stages, colors, titles = _stages(doc), _colors(doc), _titles(doc)
    profiles = {s: _profile_for(doc, s) for s in stages}
    measured = any(p is not None for p in profiles.values())
    kinds = [("textbook model (global loads, no caches)", None)]
    if measured:
        kinds += [("measured: per byte of global loads (Nsight Compute)", "opb_global"),
                  ("measured: per byte of DRAM traffic, read + write (Nsight Compute)", "opb_dram")]
    width = 0.8 / len(kinds)
    fig, ax = plt.subplots(figsize=(max(11.0, 2.3 * len(stages) + 3), 6.4), layout="constrained")
    top = TEXTBOOK_BOUND
    styles = [dict(), dict(hatch="..", edgecolor="white"), dict(hatch="xx", edgecolor="white")]
    alphas = [1.0, 0.75, 0.5]
    for si, stage in enumerate(stages):
        model, prof = _model_for(doc, stage), profiles[stage]
        for ki, (label, key) in enumerate(kinds):
            x = si + (ki - (len(kinds) - 1) / 2) * width
            v = model["opb"] if key is None else (prof or {}).get(key)
            if v is None:
                if key == "opb_global":
                    ax.text(si + width / 2, 0.02, "not profiled", rotation=90, ha="center", va="bottom",
                            fontsize=8, color="0.4", transform=ax.get_xaxis_transform())
                continue
            face = _lighten(colors[stage], 1 - alphas[ki])
            ax.bar(x, v, width * 0.92, color=face, zorder=3, **styles[ki],
                   label=label if si == 0 or stage == stages[0] else "_nolegend_")
            ax.text(x, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8.5, zorder=4)
            top = max(top, v)
    # Legend swatches in neutral grey: the colour stands for the stage, the fill for the kind.
    from matplotlib.patches import Patch
    handles = [Patch(facecolor=_lighten("0.35", 1 - alphas[ki]), hatch=[None, "..", "xx"][ki],
                     edgecolor="white", label=label) for ki, (label, _) in enumerate(kinds)]
    ax.axhline(TEXTBOOK_BOUND, color="black", linestyle="--", linewidth=1.1, zorder=5)
    ax.text(0.99, TEXTBOOK_BOUND, "textbook bound 13/4 = 3.25 OP/B\n(every input loaded once)",
            ha="right", va="bottom", fontsize=9, transform=ax.get_yaxis_transform())
    ns = sorted({p["n"] for p in profiles.values() if p is not None})
    if measured:
        where = "profiled at N = " + ", ".join(str(n) for n in ns)
        handles.append(Patch(color="none", label=where))
    else:
        note = "no Nsight Compute measurements in this results file"
        if doc.get("profile_note"):
            note += f"\n({doc['profile_note']})"
        ax.text(0.5, 0.97, note, transform=ax.transAxes, ha="center", va="top", fontsize=11,
                bbox=dict(boxstyle="round,pad=0.5", facecolor="#fff4d6", edgecolor="#c9a227"))
    ax.legend(handles=handles, loc="upper left", fontsize=9, frameon=True, framealpha=0.95)
    ax.set_xticks(range(len(stages)))
    ax.set_xticklabels([f"{titles[s]}\n" + _model_for(doc, s)["formula"].replace(", ", "\n", 1)
                        for s in stages], fontsize=9)
    pad = max(0.0, 3 - len(stages)) / 2  # keep a lone stage from filling the axes
    ax.set_xlim(-0.6 - pad, len(stages) - 0.4 + pad)
    ax.set_ylim(0, top * (1.55 if measured else 1.45))
    ax.set_ylabel("floating-point operations per byte  (FLOP/B)")
    ax.set_xlabel("stage, with the textbook formula for its parameters (T = input tile edge, "
                  "Z = output planes per block or per thread)")
    ax.grid(axis="y", color="0.88", zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    heading(fig, ax, doc, "Operations per byte: the book's model vs what the hardware counted "
                          "(13 FLOP per point)")
    return save(fig, path, doc, "operations per byte")


# --- roofline ---------------------------------------------------------------------------------

def _spread_labels(ys, gap):
    """Positions (same order) for labels wanted at ys, at least `gap` apart, as close as possible."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    pos = [ys[i] for i in order]
    for _ in range(200):
        moved = False
        for k in range(1, len(pos)):
            d = pos[k] - pos[k - 1]
            if d < gap - 1e-9:
                push = (gap - d) / 2
                pos[k - 1] -= push
                pos[k] += push
                moved = True
        if not moved:
            break
    out = [0.0] * len(ys)
    for k, i in enumerate(order):
        out[i] = pos[k]
    return out


def _spread_markers(points, near=0.03, step=0.045):
    """Sets each point's book_x and measured_x: its OP/B, or where markers of one kind (hollow,
    filled) would lie within `near` (relative) in x and within a factor 1.25 in y of another's,
    the group spread about their common x by `step` (relative) apiece."""
    for key in ("book", "measured"):
        placed = [p for p in points if p[key]]
        for p in placed:
            p[key + "_x"] = p[key]
        groups, seen = [], set()
        for i, p in enumerate(placed):
            if i in seen:
                continue
            group = [j for j, q in enumerate(placed) if j not in seen and abs(q[key] / p[key] - 1) < near
                     and max(q["y"], p["y"]) / min(q["y"], p["y"]) < 1.25]
            seen.update(group)
            groups.append(group)
        for group in groups:
            for rank, j in enumerate(group):
                placed[j][key + "_x"] = placed[j][key] * (1 + step) ** (rank - (len(group) - 1) / 2)
    for p in points:
        p.setdefault("book_x", p["book"])
        p.setdefault("measured_x", p["measured"])


def _compute_roof(runs):
    """(GFLOP/s, how it was derived) from the runs' device_peak, or (None, why not)."""
    peaks = [r["device_peak"] for r in runs if r.get("device_peak") and r["device_peak"].get("fp32_gflops")]
    if not peaks:
        return None, "compute roof: not in this results file (older harness, or an unknown architecture)"
    p = peaks[0]
    return (statistics.median(q["fp32_gflops"] for q in peaks),
            f"{p['sm_count']} SMs × {p['fp32_lanes_per_sm']} FP32 lanes × 2 FLOP (FMA) × {p['clock_mhz']:.0f} MHz, "
            "derived from the device, not measured")


def draw_roofline(doc, path):
    """GFLOP/s against OP/B at the largest N under both roofs: the memory roof (the copy's GB/s)
    and the compute roof (the FP32 FMA peak derived from the device). Each stage appears twice,
    at one height: filled at the OP/B Nsight Compute measured over DRAM, hollow at the book's
    textbook OP/B; a learner's exercise is a diamond."""
    plt = pyplot()
    import math
    timed = _timed(doc)
    n_max = max(r["n"] for r in timed)
    at_max = [r for r in timed if r["n"] == n_max]
    bw = statistics.median(r["copy_gbps"] for r in at_max)  # GB/s = GFLOP/s per (FLOP/B)
    peak, peak_how = _compute_roof(at_max)
    colors, titles = _colors(doc), _titles(doc)
    points = []
    for r in sorted(at_max, key=lambda r: (r["stage"], r["implementation"] != "solution")):
        # The kernel's own profile only: the learner's kernel is not placed at the solution's x.
        prof = _profile_for(doc, r["stage"], n_max, r["implementation"])
        measured = prof["opb_dram"] if prof is not None and prof.get("opb_dram") else None
        points.append(dict(run=r, measured=measured, book=r["model"]["opb"], y=r["gflops"],
                           prof_n=prof["n"] if prof is not None else None))

    fig, ax = plt.subplots(figsize=(14, 7.2), layout="constrained")
    xs = [p["book"] for p in points] + [p["measured"] for p in points if p["measured"]] + [TEXTBOOK_BOUND]
    ys = [p["y"] for p in points]
    # The view: the data and the roofs near it. The memory roof over the OP/B shown; the compute
    # roof only when it is within ROOF_NEAR of that view (on an H100 it is 14× above the fastest stage).
    x_lo, x_hi = min(xs) / 2, max(xs) * 2.5
    y_lo = min(ys) / 2.5
    y_hi = max(ys + [bw * max(xs)]) * 1.8
    peak_shown = bool(peak) and peak <= y_hi * ROOF_NEAR
    if peak_shown:
        x_hi = max(x_hi, peak / bw * 2.5)
        y_hi = max(y_hi, peak * 1.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers at 1, 2 and 5 of each decade
        axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    # The roofs: min(bandwidth × OP/B, peak), sampled finely enough to bend at the ridge.
    roof_x = [x_lo * (x_hi / x_lo) ** (t / 400) for t in range(401)]
    roof_y = [min(bw * x, peak) if peak else bw * x for x in roof_x]
    ax.plot(roof_x, roof_y, color="black", linewidth=2, zorder=2,
            label=f"memory roof: device-to-device copy, {bw:.0f} GB/s (N = {n_max})")
    ax.fill_between(roof_x, roof_y, y_hi, color="0.93", zorder=1)
    if peak:
        ridge = peak / bw
        label = f"compute roof: FP32 peak {peak / 1000:.1f} TFLOP/s\n({peak_how})"
        if peak_shown:
            ax.plot([ridge, x_hi], [peak, peak], color="#7a0019", linewidth=2, zorder=2, label=label)
            ax.text(x_hi / 1.05, peak * 1.12, f"compute roof {peak / 1000:.1f} TFLOP/s (FP32 FMA, derived)",
                    ha="right", va="bottom", fontsize=10, color="#7a0019")
            ax.text(ridge * 1.08, y_lo * 1.3, f"ridge: {ridge:.0f} OP/B", fontsize=8.5, color="0.3")
            ax.axvline(ridge, color="0.75", linestyle=":", linewidth=1.0, zorder=1)
        else:  # in the legend only: far above the data
            ax.plot([], [], color="#7a0019", linewidth=2,
                    label=label + f"\nabove this view: {peak / max(ys):.0f}× the fastest stage, the ridge at "
                                  f"{ridge:.0f} OP/B")
    ax.axvline(TEXTBOOK_BOUND, color="0.4", linestyle=":", linewidth=1.2, zorder=2,
               label="textbook bound: 13/4 = 3.25 OP/B (every input loaded once, no caches)")
    # A shape per stage, so that stages at one OP/B and nearly one height (04 and 05) both show;
    # markers that would still cover each other are moved apart along x by a few per cent.
    shapes = {s: STAGE_MARKERS[i % len(STAGE_MARKERS)] for i, s in enumerate(_stages(doc))}
    _spread_markers(points)

    for p in points:
        r = p["run"]
        c = colors[r["stage"]]
        yours = r["implementation"] == "exercise"
        name = f"{titles[r['stage']]}{' (yours)' if yours else ''}: {p['y']:.0f} GFLOP/s"
        if yours:  # a diamond, at its own measured OP/B where it was profiled, else the book's
            x = p["measured"] or p["book"]
            ax.scatter([x], [p["y"]], s=95, marker="D", zorder=4, linewidths=1.8,
                       facecolors=_lighten(c, 0.55), edgecolors=c,
                       label=name + f" at {x:.2f} OP/B ({'measured' if p['measured'] else 'textbook'})")
            continue
        m = shapes[r["stage"]]
        if p["measured"]:
            ax.plot([p["book_x"], p["measured_x"]], [p["y"], p["y"]], color=c, linewidth=0.9, linestyle=":",
                    zorder=3)
            ax.scatter([p["measured_x"]], [p["y"]], s=80, marker=m, zorder=4, color=c)
        ax.scatter([p["book_x"]], [p["y"]], s=80, marker=m, zorder=4, facecolors="white", edgecolors=c,
                   linewidths=1.8)
        opb = f"{p['measured']:.2f} measured, {p['book']:.2f} textbook OP/B" if p["measured"] else \
            f"{p['book']:.2f} textbook OP/B (not profiled)"
        ax.scatter([], [], s=80, marker=m, color=c, label=f"{name} at {opb}")
    from matplotlib.lines import Line2D
    handles, labels = ax.get_legend_handles_labels()
    kinds = []
    if any(p["measured"] for p in points if p["run"]["implementation"] == "solution"):
        ns = sorted({p["prof_n"] for p in points if p["measured"]})
        kinds.append((Line2D([], [], marker="o", linestyle="none", markerfacecolor="0.45", markeredgecolor="0.45",
                             markersize=8),
                      "filled: OP/B measured over DRAM traffic (Nsight Compute, N = "
                      + ", ".join(map(str, ns)) + ")"))
    kinds.append((Line2D([], [], marker="o", linestyle="none", markerfacecolor="white", markeredgecolor="0.45",
                         markeredgewidth=1.8, markersize=8),
                  "hollow: the book's textbook OP/B (global loads, no caches), same GFLOP/s"))
    if any(p["run"]["implementation"] == "exercise" for p in points):
        kinds.append((Line2D([], [], marker="D", linestyle="none", markerfacecolor="0.8", markeredgecolor="0.45",
                             markersize=8), "diamond: your exercise"))
    if not peak:
        kinds.append((Line2D([], [], linestyle="none"), peak_how))
    ax.legend(handles + [h for h, _ in kinds], labels + [t for _, t in kinds], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=8.5, frameon=False)
    ax.set_xlabel("operational intensity  (FLOP per byte: filled over DRAM traffic, hollow in the textbook model)")
    ax.set_ylabel("achieved  GFLOP/s  (13 FLOP per interior point; higher is better)")
    ax.grid(which="major", color="0.85")
    ax.grid(which="minor", color="0.94")
    ax.text(TEXTBOOK_BOUND * 1.05, y_hi / 1.15, "textbook bound\n13/4 OP/B", fontsize=8.5, color="0.3", va="top")
    above = [p for p in points if p["y"] > bw * p["book"] * 1.02]
    if above:
        ax.text(0.99, 0.02, "A hollow marker above the memory roof: the textbook OP/B counts every global load as "
                "memory traffic;\nthe caches serve many of those loads, so the OP/B that DRAM sees (filled) is "
                "higher.", transform=ax.transAxes, ha="right", va="bottom", fontsize=9,
                bbox=dict(boxstyle="round,pad=0.4", facecolor="#fff4d6", edgecolor="#c9a227"))
    heading(fig, ax, doc, f"Roofline at N = {n_max}: achieved GFLOP/s against operational intensity")

    # With the layout final, place what depends on display geometry: the stage numbers beside
    # the (filled, else hollow) points, pushed apart where points crowd (they often share an x),
    # and the memory roof's label along the line.
    fig.canvas.draw()
    to_disp = ax.transData.transform
    anchor = [(p["measured_x"] if p["measured"] else p["book_x"], p["y"]) for p in points]
    disp = [to_disp(a) for a in anchor]
    pt = 72.0 / fig.dpi
    label_y = [d[1] * pt for d in disp]
    by_x = sorted(range(len(points)), key=lambda i: disp[i][0])
    clusters, last_x = [], None
    for i in by_x:
        if last_x is None or (disp[i][0] - last_x) * pt > 70:
            clusters.append([])
        clusters[-1].append(i)
        last_x = disp[i][0]
    for members in clusters:
        spread = _spread_labels([disp[i][1] * pt for i in members], gap=13)
        for i, y in zip(members, spread):
            label_y[i] = y
    for p, a, d, ly in zip(points, anchor, disp, label_y):
        r = p["run"]
        text = _stage_number(r["stage"]) + (" (yours)" if r["implementation"] == "exercise" else "")
        ax.annotate(text, xy=a, xytext=(22, ly - d[1] * pt), textcoords="offset points",
                    fontsize=10, fontweight="bold", color=colors[r["stage"]], va="center", ha="left",
                    arrowprops=dict(arrowstyle="-", color="0.5", linewidth=0.7, shrinkA=0, shrinkB=5),
                    zorder=5)
    seg_lo, seg_hi = max(x_lo, y_lo / bw), min(x_hi, y_hi / bw, (peak / bw) if peak_shown else x_hi)
    if seg_lo < seg_hi:
        lx = seg_lo * (seg_hi / seg_lo) ** 0.08
        a, b = to_disp((lx, bw * lx)), to_disp((lx * 10, bw * lx * 10))
        angle = math.degrees(math.atan2(b[1] - a[1], b[0] - a[0]))
        ax.text(lx, bw * lx * 1.25, f"memory roof {bw:.0f} GB/s", rotation=angle, rotation_mode="anchor",
                fontsize=10, ha="left", va="bottom")
    return save(fig, path, doc, "roofline")


# --- convergence (stage 01) -------------------------------------------------------------------

def draw_convergence(doc, path):
    plt = pyplot()
    conv = doc["convergence"]
    slopes = {(m["derivative"], m["points"], m["precision"]): m.get("slope")
              for m in conv.get("measured_order") or []}
    derivs = [d for d in ("first", "second") if any(r["derivative"] == d for r in conv["rows"])]
    fig, axes = plt.subplots(1, len(derivs), figsize=(13, 7.4), layout="constrained", squeeze=False)
    all_points = sorted({r["points"] for r in conv["rows"]})
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    for ax, d in zip(axes[0], derivs):
        # double first, then float: with two legend columns each stencil gets one row.
        for prec, ls, mk in (("double", "-", "o"), ("float", "--", "^")):
            for pi, pts in enumerate(all_points):
                rows = sorted((r for r in conv["rows"] if r["derivative"] == d and r["points"] == pts
                               and r["precision"] == prec and (r["error"] or 0) > 0), key=lambda r: r["h"])
                if not rows:
                    continue
                label = f"{pts}-point, {prec}"
                s = slopes.get((d, pts, prec))
                # No slope: too few h above the round-off floor to fit (float, 5 and 7 points).
                label += f": slope {s:.2f}" if s is not None else ": no slope (round-off)"
                ax.plot([r["h"] for r in rows], [r["error"] for r in rows], linestyle=ls, marker=mk,
                        markersize=4, linewidth=1.6, color=palette[pi % len(palette)], label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"{d} derivative", fontsize=12)
        ax.set_xlabel("grid spacing h")
        ax.set_ylabel("absolute error  |finite difference − exact|  (lower is better)")
        ax.grid(which="major", color="0.85")
        ax.grid(which="minor", color="0.95")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=9, frameon=False,
                  title="solid: double, dashed: float;  slope = measured order of accuracy p\n"
                        "(an n-point stencil has stencil order (n-1)/2; expected p = n-1)",
                  title_fontsize=9)
    where = conv.get("device") or doc["gpu"]
    ex = conv.get("book_example") or {}
    func = f"  ·  f = {ex['function']}" if isinstance(ex.get("function"), str) else ""
    fig.suptitle("Discretization error of central-difference stencils (stage 01): error ∝ $h^p$ "
                 "until rounding takes over", fontsize=14, fontweight="bold")
    fig.supxlabel(f"computed on {where}{func}\nresults file: {subtitle(doc)}", fontsize=9.5, color="0.3")
    return save(fig, path, doc, "convergence")


# --- all of them ------------------------------------------------------------------------------

def _note(msg):
    print(f"plot.py: note: {msg}")


def draw_all(doc, out_dir, note=_note):
    """Validates `doc`, draws every figure it has data for into out_dir and returns their paths."""
    validate(doc)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for i, r in enumerate(doc["runs"]):
        if not r["check"]["ok"]:
            note(f"runs[{i}] ({r['stage']} {r['implementation']}, n={r['n']}) failed its check: not plotted")
    for i, a in enumerate(doc.get("alternatives") or []):
        if not a["check"]["ok"]:
            note(f"alternatives[{i}] ({a['name']}, n={a['n']}) failed its check: not plotted")
    written = [draw_speedup(doc, out / "speedup.png"),
               draw_bandwidth(doc, out / "bandwidth.png"),
               draw_opb(doc, out / "opb.png"),
               draw_roofline(doc, out / "roofline.png")]
    if not doc.get("profiles"):
        note("no Nsight Compute profiles in this results file: opb.png shows the textbook model only"
             " and roofline.png places the stages at their textbook OP/B")
    if doc.get("convergence") is None:
        not_drawn([out / "convergence.png"], "no convergence data (stage 01) in this results file", note)
    else:
        written.append(draw_convergence(doc, out / "convergence.png"))
    return written + draw_heat(doc, out, note) + draw_high_order(doc, out, note)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="plot.py", description="Draws the stencil course's figures from one "
                                 "benchmark results file.")
    ap.add_argument("results", help="a results JSON file (schema pmpp-stencil-results/1)")
    ap.add_argument("--out", default=str(HERE), help="folder for the PNG files (default: %(default)s)")
    args = ap.parse_args(argv)
    try:
        doc = load_results(args.results)
    except ResultsError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    try:
        pyplot()
    except ImportError:
        print("plot.py: matplotlib is not installed (python3 -m pip install -r requirements.txt)",
              file=sys.stderr)
        return 1
    for p in draw_all(doc, args.out):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
