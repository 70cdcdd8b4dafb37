"""Stage 07's figures (the heat equation), drawn by plot.py's draw_all when a results file has a
"heat" section (bench.py measures it with heat_bench.py):

    heat_maps.png      the middle plane of the cube at a few times, on one colour scale
    heat_accuracy.png  the error against the exact solution vs N, per precision: the order of accuracy
    heat_rates.png     G cell-updates/s per boundary condition and precision at the largest N, and
                       the launch overhead per step, without and with a CUDA graph
    temporal_blocking.png  stage 08: cell-updates/s against S beside stage 07, under the one-sweep
                       memory roof, the roof S times higher, and the roof the halo leaves

A figure without data (or whose only data failed its check) is not drawn, and an old copy of it
is removed, as plot.py does for convergence.png.
"""
import math

from figures import STAGE_COLORS, grouped_bars, heading, not_drawn, pyplot, save, subtitle
from results_schema import BOUNDARIES

FIGURES = ("heat_maps.png", "heat_accuracy.png", "heat_rates.png", "temporal_blocking.png")

# One colour per storage precision, the same in every stage 07 figure; the line styles follow
# convergence.png (double solid, float dashed).
PRECISION_ORDER = ("double", "float", "half", "bf16")  # in the legends: by bytes a cell
PRECISION_COLORS = dict(zip(PRECISION_ORDER, STAGE_COLORS))
BYTES = {"double": 8, "float": 4, "half": 2, "bf16": 2}
PRECISION_LINES = {"double": ("-", "o"), "float": ("--", "^"), "half": (":", "s"), "bf16": ("-.", "D")}
BOUNDARY_NAME = {"dirichlet": "Dirichlet", "neumann": "Neumann", "periodic": "periodic"}
BOUNDARY_MEANING = {"dirichlet": "u = 0 on the faces", "neumann": "no heat crosses the faces",
                    "periodic": "the cube wraps around"}
# harness/heat.cpp's exact_solution_text(), as mathtext.
EXACT = {
    "dirichlet": r"$\sin\pi x\,\sin\pi y\,\sin\pi z\;e^{-3\pi^2\alpha t}"
                 r" + \frac{1}{2}\sin 3\pi x\,\sin 2\pi y\,\sin\pi z\;e^{-14\pi^2\alpha t}$",
    "neumann": r"$\cos\pi x\,\cos\pi y\,\cos\pi z\;e^{-3\pi^2\alpha t}"
               r" + \frac{1}{2}\cos 3\pi x\,\cos 2\pi y\,\cos\pi z\;e^{-14\pi^2\alpha t}$",
    "periodic": r"$\cos 2\pi x\,\cos 2\pi y\,\cos 2\pi z\;e^{-12\pi^2\alpha t}"
                r" + \frac{1}{2}\cos 6\pi x\,\cos 4\pi y\,\cos 2\pi z\;e^{-56\pi^2\alpha t}$",
}


def _log_axes(plt, ax, ticks, xbase=10):
    """Both axes logarithmic, a labelled tick at each x in ticks, a light grid, no top or right frame."""
    ax.set_xscale("log", base=xbase)
    ax.set_yscale("log")
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.grid(which="major", color="0.85")
    ax.grid(which="minor", axis="y", color="0.95")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _boundaries(bc):
    return f"{BOUNDARY_NAME[bc]} boundaries ({BOUNDARY_MEANING[bc]})"


def _passed(records):
    return [r for r in records if r["check"]["ok"]]


def _run_of(doc, fused=False):
    """The subtitle naming the run that measured the heat section: the file's, or the section's own
    (heat.run, from `bench --only-heat`); for stage 08's figure, heat.fused_run (`bench --only-08`,
    measured later still) wins."""
    heat = doc["heat"]
    return subtitle({**doc, **(heat.get("run") or {}), **((heat.get("fused_run") or {}) if fused else {})})


def _cell_x(bc, n, i):
    """harness/heat.cpp's HeatGeometry::x(i): where cell i sits along an axis."""
    return {"dirichlet": i / (n - 1), "neumann": (i - 0.5) / (n - 2), "periodic": (i - 1) / (n - 2)}[bc]


# --- the middle plane at a few times ------------------------------------------------------------

def draw_maps(doc, path):
    plt = pyplot()
    rec = doc["heat"]["snapshots"]
    shots = rec["snapshots"]
    values = [v for s in shots for row in s["plane"] for v in row]
    lo, hi = min(values), max(values)
    if lo < 0:  # a solution of both signs: a diverging scale centred on 0
        lim = max(-lo, hi)
        scale = dict(cmap="RdBu_r", vmin=-lim, vmax=lim)
    else:
        scale = dict(cmap="inferno", vmin=0, vmax=hi)
    width = max(12.5, 2.9 * len(shots) + 2.2)
    side = (width - 1.4) / len(shots)  # each map square, about as tall as the colour bar
    fig, axes = plt.subplots(1, len(shots), figsize=(width, side + 2.3), layout="constrained", squeeze=False)
    for ax, shot in zip(axes[0], shots):
        # Rows are y (j), columns z (k); the cells cover the unit square to within a cell.
        image = ax.imshow(shot["plane"], origin="lower", extent=(0, 1, 0, 1), interpolation="nearest", **scale)
        ax.set_title(f"t = {shot['t']:.3g}", fontsize=13)
        ax.set_xticks([])
        ax.set_yticks([])
    first = axes[0][0]
    first.set_xticks([0, 1])
    first.set_yticks([0, 1])
    first.set_xlabel("z", fontsize=11)
    first.set_ylabel("y", fontsize=11, rotation=0)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.9, pad=0.02, label="u  (one scale for every picture)")
    n, bc = rec["n"], rec["bc"]
    x = _cell_x(bc, n, n // 2)
    fig.suptitle(f"The heat equation (stage 07): the middle plane of the cube as the heat diffuses\n"
                 f"N = {n}, {_boundaries(bc)}, {rec['precision']} storage; the plane x = {x:.2f}\n"
                 f"starting from the exact solution  u = {EXACT[bc]}", fontsize=13, fontweight="bold")
    alpha = f"α = {rec['alpha']:g}, " if rec["alpha"] != 1 else ""
    fig.supxlabel(f"{alpha}{rec['steps']} steps of dt = {rec['dt']:.3g} to t = {rec['t_end']:.3g};  "
                  f"error against the exact solution at the end {rec['analytic_error']:.2g}\n"
                  f"results file: {_run_of(doc)}", fontsize=9.5, color="0.3")
    return save(fig, path, doc, "heat equation: the middle plane over time")


# --- the order of accuracy ----------------------------------------------------------------------

def fit_order(points):
    """The order p in error ∝ h^p: the least-squares slope of log(error) against log(h) over the
    leading points (by N) in which the error still falls. In double and float that is every point;
    in half and bf16 rounding soon stops the error falling (and then raises it), and those points
    say nothing about the scheme. points: [(n, h, error)], errors > 0. Returns (p, the largest N
    fitted), or (None, None) when fewer than two points fall."""
    points = sorted(points)
    fitted = points[:1]
    for point in points[1:]:
        if point[2] >= fitted[-1][2]:
            break
        fitted.append(point)
    if len(fitted) < 2:
        return None, None
    xs = [math.log(h) for _, h, _ in fitted]
    ys = [math.log(e) for _, _, e in fitted]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    p = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return p, fitted[-1][0]


def _accuracy_curves(doc):
    """(bc, precision) -> [(n, h, error)] over the passing records with an error above 0."""
    curves = {}
    for r in _passed(doc["heat"]["accuracy"]):
        if r["analytic_error"] > 0:
            curves.setdefault((r["bc"], r["precision"]), []).append((r["n"], r["h"], r["analytic_error"]))
    return {k: sorted(v) for k, v in sorted(curves.items(), key=lambda kv: (BOUNDARIES.index(kv[0][0]),
                                                                             PRECISION_ORDER.index(kv[0][1])))}


def draw_accuracy(doc, path):
    plt = pyplot()
    curves = _accuracy_curves(doc)
    records = _passed(doc["heat"]["accuracy"])
    several_bcs = len({bc for bc, _ in curves}) > 1
    fig, ax = plt.subplots(figsize=(11.5, 7.0), layout="constrained")
    for (bc, prec), points in curves.items():
        p, upto = fit_order(points)
        label = prec + (f", {bc}" if several_bcs else "")
        if p is None:
            label += ": no fit (the error does not fall)"
        else:
            label += f": p = {p:.2f}"
            if upto != points[-1][0]:
                label += f" (fitted for N ≤ {upto}, then rounding wins)"
        ls, marker = PRECISION_LINES[prec]
        ax.plot([n for n, _, _ in points], [e for _, _, e in points], linestyle=ls, marker=marker, markersize=6,
                linewidth=1.8, color=PRECISION_COLORS[prec], label=label, zorder=3)
    # The reference: error ∝ h², through half the error of the most accurate curve at its smallest N.
    _, h0, e0 = min((pts[0] for pts in curves.values()), key=lambda q: (q[0], q[2]))
    ns = sorted({n for pts in curves.values() for n, _, _ in pts})
    hs = {n: h for pts in curves.values() for n, h, _ in pts}
    ax.plot(ns, [e0 / 2 * (hs[n] / h0) ** 2 for n in ns], color="black", linestyle="--", linewidth=1.2, zorder=2,
            label="O(h²): the error ÷ 4 each time h halves")
    _log_axes(plt, ax, ns)
    t_end = records[0]["t_end"]
    r_max = max(r["r"] for r in records)
    ax.set_xlabel(f"N: a grid of N×N×N cells, spacing h = 1/(N−1).  Time step dt = r·h²/α with "
                  f"r ≤ {r_max:.3g}, so dt ∝ h²: the run to t = {t_end:g} takes more steps as N grows")
    if any(fit_order(points)[1] not in (None, points[-1][0]) for points in curves.values()):
        low, high = ax.get_ylim()
        ax.set_ylim(low, high * (high / low) ** 0.25)  # room for the note above the curves
        ax.text(0.01, 0.98, "Where a curve turns up, rounding wins: every step rounds each cell to the storage "
                "precision,\nand as N grows there are more steps (∝ N²), each changing u less (∝ h²). "
                "In half and bf16\nthe changes end up smaller than the rounding, and the heat stops diffusing.",
                transform=ax.transAxes, ha="left", va="top", fontsize=9.5,
                bbox=dict(boxstyle="round,pad=0.4", facecolor="#fff4d6", edgecolor="#c9a227"))
    ax.set_ylabel(f"error at t = {t_end:g}:  max |u − exact| / max |exact|  (lower is better)")
    ax.legend(loc="lower left", fontsize=10, frameon=True, framealpha=0.95,
              title="storage precision: measured order p (error ∝ $h^p$)", title_fontsize=10)
    bcs = sorted({bc for bc, _ in curves}, key=BOUNDARIES.index)
    heading(fig, ax, doc, "The heat equation (stage 07): the error falls as h² until the storage precision "
                          "stops it", f"{', '.join(_boundaries(bc) for bc in bcs)};  {_run_of(doc)}")
    return save(fig, path, doc, "heat equation: order of accuracy")


# --- speed and launch overhead ------------------------------------------------------------------

def draw_rates(doc, path):
    plt = pyplot()
    heat = doc["heat"]
    overhead = _passed(heat["overhead"])
    panels = (1 if heat["runs"] else 0) + (1 if overhead else 0)
    fig, axes = plt.subplots(1, panels, figsize=(16 if panels == 2 else 11.5, 6.8), layout="constrained",
                             squeeze=False, gridspec_kw={"width_ratios": [2.6, 1][:panels]})
    axes = list(axes[0])
    title = "The heat equation (stage 07): cell updates per second"
    if heat["runs"]:
        ax = axes.pop(0)
        n_max = max(r["n"] for r in heat["runs"])
        here = [r for r in heat["runs"] if r["n"] == n_max]
        bcs = [bc for bc in BOUNDARIES if any(r["bc"] == bc for r in here)]
        series = []
        for prec in PRECISION_ORDER:
            mine = [r for r in here if r["precision"] == prec]
            if not mine:
                continue
            ok = {r["bc"]: r for r in mine if r["check"]["ok"]}
            series.append(dict(label=f"{prec} ({BYTES[prec]} bytes a cell)",
                               values={bc: r["updates_per_s"] * 1e-9 for bc, r in ok.items()},
                               labels={bc: f"{100 * r['fraction_of_copy']:.0f}% of copy" for bc, r in ok.items()},
                               failed={r["bc"] for r in mine if not r["check"]["ok"]},
                               style=dict(color=PRECISION_COLORS[prec], edgecolor="white", linewidth=0.6)))
        top = grouped_bars(ax, series, bcs, None, lambda bc: f"{BOUNDARY_NAME[bc]}\n{BOUNDARY_MEANING[bc]}",
                           None, legend=dict(bbox_to_anchor=None, loc="upper center", ncol=4,
                                        title="storage precision (higher is better)"))
        ax.set_ylim(0, max(top, 1.0) * 1.45)
        ax.set_ylabel("G cell-updates per second  (higher is better)")
        ax.set_xlabel(f"boundary condition; N = {n_max}, one step, from DRAM.  Bar labels: the step's "
                      "effective bandwidth (one read and one\nwrite of each cell) as a % of a device-to-device "
                      "copy of the same grid.  Half and bf16 move half the bytes of float.")
        title += f" at N = {n_max}" + (", and what launching a step costs" if overhead else "")
        heading(fig, ax, doc, title, _run_of(doc))
    if overhead:
        ax = axes.pop(0)
        steps = overhead[0]["steps"]
        by_n = {r["n"]: r for r in overhead}
        series = [dict(label=f"a loop of {steps} launches",
                       values={n: r["loop_us_per_step"] for n, r in by_n.items()}, failed=set(),
                       style=dict(color="0.62", edgecolor="white", linewidth=0.6)),
                  dict(label=f"the {steps} steps as one CUDA graph",
                       values={n: r["graph_us_per_step"] for n, r in by_n.items()}, failed=set(),
                       style=dict(color=PRECISION_COLORS[overhead[0]["precision"]], edgecolor="white",
                                  linewidth=0.6))]
        top = grouped_bars(ax, series, sorted(by_n), lambda v: f"{v:.2f} µs",
                           lambda n: f"N = {n}\none step alone:\n{by_n[n]['step_ms']['median'] * 1e3:.1f} µs",
                           None, legend=dict(bbox_to_anchor=None, title="lower is better"))
        ax.set_ylim(0, top * 1.5)
        ax.set_ylabel("µs per step")
        ax.set_xlabel(f"small grids ({overhead[0]['precision']}, {BOUNDARY_NAME[overhead[0]['bc']]}): the "
                      "difference between\nthe two bars is the launch cost that a graph saves")
        if heat["runs"]:
            ax.set_title("launch overhead", fontsize=11)
        else:
            heading(fig, ax, doc, "The heat equation (stage 07): what launching a step costs", _run_of(doc))
    return save(fig, path, doc, "heat equation: cell updates per second and launch overhead")


# --- stage 08: temporal blocking ------------------------------------------------------------------

def loop_rate(r):
    """Cell-updates per second of the loop of r["steps"] steps (heat_bench.loop_rate)."""
    return (r["n"] - 2) ** 3 * r["steps"] / (r["loop_ms"]["median"] * 1e-3)


def read_tile(r):
    """(rows, columns) of a plane that one block of stage 08 reads, or None: the tile it writes
    (the record's tile: tile_j × tile_k, the cells of a plane written per block) and a halo of S
    rows on each side along j; along k one warp's 32 lanes × cells_per_thread columns
    (solutions/08_temporal_blocking/stencil.cu: TILE_Y = 32 rows, 32·W columns, W = kCells)."""
    if not r.get("tile") or not r.get("cells_per_thread"):
        return None
    return r["tile"][0] + 2 * r["fused_steps"], 32 * r["cells_per_thread"]


def tiles_text(records):
    """One line per read tile, e.g. 'reads 32 × 128, writes 30 × 120 (S = 1), 28 × 120 (S = 2)':
    the cells of a plane one block reads and writes, for each S (records of stage 08, one N)."""
    groups = []  # [read tile, ["30 × 120 (S = 1)", ...]]
    for r in sorted((r for r in records if r.get("tile")), key=lambda r: r["fused_steps"]):
        read = read_tile(r)
        if not groups or groups[-1][0] != read:
            groups.append([read, []])
        groups[-1][1].append(f"{r['tile'][0]} × {r['tile'][1]} (S = {r['fused_steps']})")
    return "\n".join(("  reads " + f"{read[0]} × {read[1]}, writes " if read else "  writes ") + ", ".join(written)
                     for read, written in groups)


def _fused_passed(doc):
    return [r for r in doc["heat"].get("fused") or [] if r["check"]["ok"]]


def _is_sweep(r):
    """A record of the S sweep (Dirichlet, float); the others compare one S per boundary and precision."""
    return (r["bc"], r["precision"]) == ("dirichlet", "float")


def fused_pairs(records):
    """Stage 08 against stage 07 for every boundary condition and precision measured at one N and
    one S (the records of the other pairs name them; Dirichlet float's come from the S sweep):
    (n, S, {(bc, precision): (rate 08, rate 07)}), or None when only the S sweep was measured."""
    others = [r for r in records if r["stage"].startswith("08") and not _is_sweep(r)]
    if not others:
        return None
    n, S = max((r["n"], r["fused_steps"]) for r in others)
    rates = {}
    for r in records:
        if r["n"] == n and (r["stage"].startswith("07") or r["fused_steps"] == S):
            rates.setdefault((r["bc"], r["precision"]), {})[r["stage"][:2]] = loop_rate(r)
    return n, S, {pair: (rate["08"], rate["07"]) for pair, rate in rates.items() if len(rate) == 2}


TIMED = ("measured", "timed")  # a sweep's series, checked then timed; a runs file's, timed only (its binary checked elsewhere)


def best_fused(heat):
    """Stage 08 at its best S at every N of a sweep's heat part (sweep.py: one series per S):
    {(bc, precision): [point, ...]} in the order of N, each the point of the S whose speed-up over
    stage 07 is the highest there, with its fused_steps added.
    Only the S measured at that N count; an N where none was compared with stage 07 is left out."""
    best = {}
    for s in heat["series"]:
        if not s["stage"].startswith("08") or s["status"] not in TIMED:
            continue
        at = best.setdefault((s["bc"], s["precision"]), {})
        for p in s["points"]:
            if p.get("speedup_over_07") is not None and (p["n"] not in at
                                                         or p["speedup_over_07"] > at[p["n"]]["speedup_over_07"]):
                at[p["n"]] = {**p, "fused_steps": s["fused_steps"]}
    return {key: [at[n] for n in sorted(at)] for key, at in best.items() if at}


def best_s_wins(pts):
    """{S: at how many of best_fused's points S was the best}, the most often best first."""
    wins = {}
    for p in pts:
        wins[p["fused_steps"]] = wins.get(p["fused_steps"], 0) + 1
    return dict(sorted(wins.items(), key=lambda item: (-item[1], item[0])))


def _draw_pairs(ax, pairs, steps):
    """Stage 08's speed-up over stage 07 at one N and S, a group of bars per boundary condition,
    one bar per precision."""
    n, S, rates = pairs
    bcs = [bc for bc in BOUNDARIES if any(b == bc for b, _ in rates)]
    speedup = {pair: r08 / r07 for pair, (r08, r07) in rates.items()}
    series = []
    for prec in PRECISION_ORDER:
        mine = [bc for bc in bcs if (bc, prec) in rates]
        if mine:
            series.append(dict(label=prec, values={bc: speedup[bc, prec] for bc in mine},
                               labels={bc: f"{speedup[bc, prec]:.2f}×  ({rates[bc, prec][0] * 1e-9:.0f} G/s)"
                                       for bc in mine},
                               failed=set(), style=dict(color=PRECISION_COLORS[prec], edgecolor="white", linewidth=0.6)))
    top = grouped_bars(ax, series, bcs, None, lambda bc: BOUNDARY_NAME[bc],
                       (1.0, "stage 07 (1×): fusing loses below this line"),
                       legend=dict(bbox_to_anchor=None, loc="upper center", ncol=4, title="storage precision"))
    ax.set_ylim(0, max(top, 1.0) * 1.5)
    ax.set_ylabel("stage 08's cell-updates/s over stage 07's  (higher is better)")
    ax.set_title(f"S = {S} against stage 07, N = {n}, {steps} steps: every boundary condition and precision",
                 fontsize=11)
    ax.set_xlabel(f"boundary condition.  Bar labels: the speed-up and stage 08's G cell-updates/s; both stages\n"
                  f"timed with --time-only, each checked at a smaller N first")


def draw_fused(doc, path):
    """One panel per N: stage 08's loop rate against S (Dirichlet, float), stage 07's in the same
    run, and three roofs from the copy measured with each run: one sweep (8 bytes an update in
    float), S sweeps per trip with no halo (S times higher), and with the halo of the tiles each
    record names (the harness's model, harness/heat.h's fused_bytes_per_update, in
    model_bytes_per_update). Then, where measured, one panel of stage 08's speed-up over stage 07
    for every boundary condition and precision (fused_pairs)."""
    plt = pyplot()
    everything = _fused_passed(doc)
    records = [r for r in everything if _is_sweep(r)]
    pairs = fused_pairs(everything)
    ns = sorted({r["n"] for r in records if r["stage"].startswith("08")})
    fig, axes = plt.subplots(1, len(ns) + bool(pairs), figsize=(7.2 * (len(ns) + bool(pairs)), 6.4),
                             layout="constrained", squeeze=False)
    for ax in axes[0][1:len(ns)]:
        ax.sharey(axes[0][0])
    if pairs:
        _draw_pairs(axes[0][-1], pairs, everything[0]["steps"])
    color = STAGE_COLORS[1]
    for ax, n in zip(axes[0], ns):
        mine = sorted((r for r in records if r["n"] == n and r["stage"].startswith("08")),
                      key=lambda r: r["fused_steps"])
        base = [r for r in records if r["n"] == n and r["stage"].startswith("07")]
        S = [r["fused_steps"] for r in mine]
        cell = mine[0]["bytes_per_cell"] if "bytes_per_cell" in mine[0] else BYTES[mine[0]["precision"]]
        copy = sorted(r["copy_gbps"] for r in mine)[len(mine) // 2] * 1e9  # bytes/s, the median run's
        one_sweep = copy / (2 * cell)
        ax.plot(S, [s * one_sweep * 1e-9 for s in S], color="0.25", linestyle="--", linewidth=1.2,
                label="S × the one-sweep roof: S steps per trip, no halo")
        ax.axhline(one_sweep * 1e-9, color="black", linewidth=1.4,
                   label=f"the one-sweep roof: a copy's {copy * 1e-9:.0f} GB/s, {2 * cell} bytes an update")
        halo = [(r["fused_steps"], copy / r["model_bytes_per_update"] * 1e-9)
                for r in mine if r.get("model_bytes_per_update")]
        if halo:
            ax.plot(*zip(*halo), color="0.45", linestyle=":", marker="x", linewidth=1.2,
                    label="the roof with the halo; of each plane a block\n" + tiles_text(mine))
        ax.plot(S, [loop_rate(r) * 1e-9 for r in mine], color=color, marker="o", linewidth=2.2,
                label="stage 08, measured (the loop)")
        for s, r in zip(S, mine):
            ax.annotate(f"{loop_rate(r) * 1e-9:.0f}", (s, loop_rate(r) * 1e-9), xytext=(0, -14),
                        textcoords="offset points", ha="center", fontsize=9, color=color)
        if base:
            rate = loop_rate(base[0]) * 1e-9
            ax.axhline(rate, color=STAGE_COLORS[0], linewidth=1.6, linestyle="-.",
                       label=f"stage 07 in the same run: {rate:.0f} G/s")
        _log_axes(plt, ax, S, xbase=2)
        plain = plt.FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(plain)
        ax.set_title(f"N = {n}, {mine[0]['steps']} steps, {mine[0]['precision']}, "
                     f"{BOUNDARY_NAME[mine[0]['bc']]}", fontsize=11)
        loose = [r for r in mine + base if r.get("checked") is False or r["check"].get("checked") is False]
        at = sorted({m for r in loose for m in r.get("checked_at", [])})
        ax.set_xlabel("S: steps fused per trip through DRAM" + (
            f"\ntimed with --time-only; each S checked at N = {', '.join(map(str, at))}" if loose else ""))
        ax.legend(loc="upper left", fontsize=8.5, frameon=True, framealpha=0.95)
    axes[0][0].set_ylabel("G cell-updates per second  (higher is better)")
    fig.suptitle("Temporal blocking (stage 08): cell-updates per second against S, under the roofs"
                 + (", and against stage 07 for every boundary condition and precision" if pairs else "") + "\n"
                 + _run_of(doc, fused=True), fontsize=13, fontweight="bold")
    return save(fig, path, doc, "temporal blocking: cell-updates/s against S")


# --- all of them --------------------------------------------------------------------------------

def draw_heat(doc, out, note):
    """Draws the stage 07 and 08 figures that `doc` (validated) has data for into out; returns their paths."""
    paths = [out / name for name in FIGURES]
    heat = doc.get("heat")
    if heat is None:
        not_drawn(paths, "no stage 07 data (the heat equation) in this results file", note)
        return []
    for part in ("runs", "overhead", "accuracy"):
        for i, r in enumerate(heat[part]):
            if not r["check"]["ok"]:
                note(f"heat.{part}[{i}] ({r['bc']} {r['precision']}, n={r['n']}) failed its check: not plotted")
    shots = heat["snapshots"]
    plans = [(draw_maps, shots is not None and shots["check"]["ok"],
              "no pictures of stage 07 that passed their check (heat.snapshots)"),
             (draw_accuracy, bool(_accuracy_curves(doc)), "no stage 07 accuracy data that passed its check"),
             (draw_rates, bool(heat["runs"] or _passed(heat["overhead"])), "no timed stage 07 runs"),
             (draw_fused, any(r["stage"].startswith("08") and _is_sweep(r) for r in _fused_passed(doc)),
              "no stage 08 runs (temporal blocking) that passed their check")]
    written = []
    for (draw, has_data, why), path in zip(plans, paths):
        if has_data:
            written.append(draw(doc, path))
        else:
            not_drawn([path], why, note)
    return written
