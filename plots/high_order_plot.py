"""Stage 10's figure and table (the star stencil of order R), from a results file's optional
"high_order" section (bench.py measures it with build/stage_10_high_order_solution and
alternatives.measure_orders):

    high_order.png   % of a device-to-device copy against R = 1..4 at the section's largest N, for
                     the basic, tiled and fast kernels, and the CuPy/PyTorch alternatives

summary(section, say) prints the table (every N measured). The figure needs matplotlib (through
figures.pyplot); the table does not.
"""
from figures import STAGE_COLORS, heading, not_drawn, pyplot, save, subtitle
from results_schema import KERNELS

FIGURE = "high_order.png"
KERNEL_TITLES = {"basic": "basic (Fig. 8.6: every input from global memory)",
                 "tiled": "tiled (Fig. 8.12: register tiling, one shared plane)",
                 "fast": "fast (beyond the book: streaming, as stage 06)"}
KERNEL_COLORS = dict(zip(KERNELS, (STAGE_COLORS[0], STAGE_COLORS[3], STAGE_COLORS[5])))
ALT_MARKERS = ["s", "D", "^", "v", "P"]


def _passed(records):
    return [r for r in records if r["check"]["ok"]]


def _where_checked(records):
    """'N = 512 timed with --time-only, checked at N = 256' or '' when every record was checked."""
    loose = sorted({r["n"] for r in records if r["check"].get("checked") is False})
    at = sorted({n for r in records if r["check"].get("checked") is False for n in r.get("checked_at", [])})
    if not loose:
        return ""
    return (f"N = {', '.join(map(str, loose))} timed with --time-only (random input made on the GPU); "
            f"the same programs checked at N = {', '.join(map(str, at))}")


def summary(section, say):
    """The table: each kernel's median, % of copy and speed-up over the basic kernel, by R and N;
    then the alternatives."""
    runs = section["runs"]
    say("\nStage 10, the star stencil of order R (6R + 1 points, 12R + 1 FLOPs a point): median ms, % of a "
        "device copy,\nand the speed-up over the basic kernel in the same run")
    say(f"{'R':>2} {'points':>6} {'N':>5}  " + "  ".join(f"{k:>22}" for k in KERNELS))
    keys = sorted({(r["order"], r["n"]) for r in runs})
    for R, n in keys:
        cells = []
        for k in KERNELS:
            r = next((x for x in runs if x["order"] == R and x["n"] == n and x["kernel"] == k), None)
            if r is None:
                cells.append(f"{'-':>22}")
            elif not r["check"]["ok"]:
                cells.append(f"{'check FAILED':>22}")
            else:
                vs = f" {r['vs_basic']:4.2f}x" if r.get("vs_basic") else ""
                cells.append(f"{r['time_ms']['median']:8.4f} {100 * r['fraction_of_copy']:5.1f}%{vs:>6}")
        say(f"{R:2d} {6 * R + 1:6d} {n:5d}  " + "  ".join(cells))
    alts = section.get("alternatives") or []
    if alts:
        say(f"\nalternatives of order R: median ms and % of copy (the copy of stage 10's runs at that N)")
        for a in sorted(alts, key=lambda a: (a["name"], a["order"], a["n"])):
            if a["check"]["ok"]:
                share = f"{100 * a['fraction_of_copy']:5.1f}%" if a.get("fraction_of_copy") else "    -"
                say(f"  {a['name']:34} R = {a['order']}  N = {a['n']:4d}  {a['time_ms']['median']:9.4f} {share}")
            else:
                say(f"  {a['name']:34} R = {a['order']}  N = {a['n']:4d}  check FAILED")
    where = _where_checked(runs + alts)
    if where:
        say(f"({where})")


def draw_high_order(doc, path):
    """% of copy against R at the largest N of the section: a line per kernel, labelled with its
    share; the alternatives in grey, a marker shape each."""
    plt = pyplot()
    section = doc["high_order"]
    runs = _passed(section["runs"])
    n = max(r["n"] for r in runs)
    here = [r for r in runs if r["n"] == n]
    alts = [a for a in _passed(section.get("alternatives") or []) if a["n"] == n and a.get("fraction_of_copy")]
    fig, ax = plt.subplots(figsize=(15, 7.0), layout="constrained")
    orders = sorted({r["order"] for r in here} | {a["order"] for a in alts})
    top = 100.0
    for k in KERNELS:
        mine = sorted((r for r in here if r["kernel"] == k), key=lambda r: r["order"])
        if not mine:
            continue
        xs, ys = [r["order"] for r in mine], [100 * r["fraction_of_copy"] for r in mine]
        ax.plot(xs, ys, color=KERNEL_COLORS[k], marker="o", markersize=8, linewidth=2.2, zorder=4,
                label=KERNEL_TITLES[k])
        above = k == "tiled"  # the basic and fast kernels' labels below their points, the tiled one's above
        for r, x, y in zip(mine, xs, ys):
            vs = f", {r['vs_basic']:.2f}× basic" if r.get("vs_basic") and k != "basic" else ""
            ax.annotate(f"{y:.0f}%{vs}", (x, y), xytext=(0, 9 if above else -10), textcoords="offset points",
                        ha="center", va="bottom" if above else "top", fontsize=8.5, color=KERNEL_COLORS[k], zorder=6,
                        bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=0.5))
        top = max(top, *ys)
    names = []
    for a in alts:
        if a["name"] not in names:
            names.append(a["name"])
    for i, name in enumerate(names):
        mine = sorted((a for a in alts if a["name"] == name), key=lambda a: a["order"])
        xs, ys = [a["order"] for a in mine], [100 * a["fraction_of_copy"] for a in mine]
        ax.plot(xs, ys, color="0.45", linestyle=":" if len(xs) > 1 else "none", marker=ALT_MARKERS[i % len(ALT_MARKERS)],
                markersize=8, markerfacecolor="white", markeredgewidth=1.6, linewidth=1.2, zorder=3,
                label=f"{name} (alternative)" + (f", R = {xs[0]} only" if len(xs) == 1 else ""))
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.0f}%", (x, y), xytext=(10, 0), textcoords="offset points", ha="left", va="center",
                        fontsize=8, color="0.35")
        top = max(top, *ys)
    ax.axhline(100, color="black", linestyle="--", linewidth=1.1, zorder=2)
    ax.text(orders[-1] + 0.45, 101, "100% = device-to-device copy", fontsize=9, va="bottom", ha="right")
    ax.set_xticks(orders)
    ax.set_xticklabels([f"R = {R}\n{6 * R + 1} points" for R in orders])
    ax.set_xlim(orders[0] - 0.35, orders[-1] + 0.5)
    ax.set_ylim(0, top * 1.22)
    ax.set_ylabel("effective bandwidth, % of a device-to-device copy  (higher is better)")
    where = _where_checked(here + alts)
    ax.set_xlabel(f"order R of the star stencil (R cells on each side along each axis).  N = {n}; 8 bytes per "
                  f"interior point, (N − 2R)³ points" + (f"\n{where}" if where else ""))
    ax.grid(axis="y", color="0.9")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False, title="higher is better",
              title_fontsize=9)
    heading(fig, ax, doc, f"Stage 10: stencils of order R at N = {n}, as a share of a device-to-device copy",
            subtitle({**doc, **(section.get("run") or {})}))
    return save(fig, path, doc, "high order: % of copy against R")


def draw(doc, out, note):
    """Draws high_order.png when `doc` (validated) has stage 10 runs that passed; returns the paths."""
    path = out / FIGURE
    section = doc.get("high_order")
    if not section or not _passed(section["runs"]):
        not_drawn([path], "no stage 10 runs (order R) that passed their check", note)
        return []
    for i, r in enumerate(section["runs"]):
        if not r["check"]["ok"]:
            note(f"high_order.runs[{i}] ({r['kernel']}, R = {r['order']}, n={r['n']}) failed its check: not plotted")
    return [draw_high_order(doc, path)]
