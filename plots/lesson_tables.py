#!/usr/bin/env python3
"""The lessons' tables of measured figures, made from the shipped results files, so that a lesson
and the file it quotes cannot drift apart.

    python3 plots/lesson_tables.py            check: exit 1 naming each table that differs from its file
    python3 plots/lesson_tables.py --write    rewrite the tables from the files (after shipping new results)

It also checks the README's stage table, whose rows are prose: each must still contain the
figures these files give (stage_table_phrases); a row that does not is named, to be edited by hand.
And every results file or figure that a lesson names (plots/results/..., plots/figures/...) must
be in the repository (missing_files): a renamed or deleted file is named with the lesson.

A table sits in a lesson between two marker lines, which this script keeps:

    <!-- table fused_pairs: made from the shipped results by plots/lesson_tables.py -->

    | ... the table ... |

    <!-- end table -->

The prose around a table is the lesson's own: after --write, read it again against the new table.
tests/test_lesson_tables.py runs the check in the unit suite.
"""
import json
import re
import sys
from pathlib import Path

from heat_plot import TIMED, best_fused, best_s_wins, fused_pairs as pair_rates, loop_rate

ROOT = Path(__file__).resolve().parent.parent
GPU = "nvidia-h100-80gb-hbm3"  # the GPU whose results the lessons quote
MAIN = f"plots/results/{GPU}.json"
SWEEP = f"plots/results/sweep/{GPU}.json"
ORDERS = f"plots/results/runs/stage10_orders-{GPU}.json"
SWEEP_H200 = "plots/results/sweep/nvidia-h200.json"  # its high_order part: stage 10's kernel since a971783
ORDERS_NCU = f"plots/results/runs/stage10_ncu-{GPU}.json"
ORDERS_ABLATIONS_H200 = "plots/results/runs/stage10_ablations-nvidia-h200.json"  # the fast kernel, a stream left out
FUSED_NCU = f"plots/results/runs/stage08_ncu_two_launches-{GPU}.json"
FUSED_NCU_FINAL = f"plots/results/runs/stage08_ncu_final-{GPU}.json"
EVERY_N = f"plots/results/runs/stage07_every_n-{GPU}.json"  # stage 07 at the sweep's sizes: a second run of its code
QUOTED = (MAIN, SWEEP, SWEEP_H200, ORDERS, ORDERS_NCU, ORDERS_ABLATIONS_H200, FUSED_NCU, FUSED_NCU_FINAL,
          EVERY_N)  # every results file a table is made from

BEGIN = re.compile(r"^<!-- table (\w+): made from the shipped results by plots/lesson_tables\.py -->$")
END = "<!-- end table -->"
BOUNDARY_NAME = {"dirichlet": "Dirichlet", "neumann": "Neumann", "periodic": "periodic"}


def _load(root, path):
    return json.loads((root / path).read_text(encoding="utf-8"))


def _rows(header, align, rows):
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def _pct(fraction):
    return f"{100 * fraction:.1f}%"


def _bold(text, on):
    return f"**{text}**" if on else text


def _span(values, fmt, unit):
    """'a–b' and the unit, of the least and the most value: '91.0–98.5%'."""
    low, high = fmt(min(values)), fmt(max(values))
    return (low if low == high else f"{low}–{high}") + unit


def _percent_span(fractions):
    return _span([100 * x for x in fractions], "{:.1f}".format, "%")


def _times_span(ratios):
    return _span(ratios, "{:.2f}".format, "×")


# --- stage 07 --------------------------------------------------------------------------------------

HEAT_N512_ROWS = [("dirichlet", "float"), ("neumann", "float"), ("periodic", "float"), ("dirichlet", "double"),
                  ("dirichlet", "half"), ("dirichlet", "bf16"), ("neumann", "half"), ("periodic", "half")]


def heat_n512(root):
    """Stage 07 at the main file's largest N: one step per boundary and precision, and the analytic
    error of the same configuration's checked run at the smallest N."""
    runs = _load(root, MAIN)["heat"]["runs"]
    n, small = max(r["n"] for r in runs), min(r["n"] for r in runs)
    at = {(r["n"], r["bc"], r["precision"]): r for r in runs}
    rows = []
    for bc, precision in HEAT_N512_ROWS:
        r = at[(n, bc, precision)]
        mark = "*" if r["fraction_of_copy"] > 1 else ""  # a disturbed copy: the lesson's footnote says
        rows.append([bc, precision, f"{r['step_ms']['median']:.3f}", f"{r['updates_per_s'] / 1e9:.1f}",
                     _pct(r["fraction_of_copy"]) + mark, f"{at[(small, bc, precision)]['analytic_error']:.1e}"])
    return _rows(["boundary", "precision", "ms/step", "G cell-updates/s", "% of copy",
                  f"analytic error (N = {small})"], ["---", "---", "---:", "---:", "---:", "---:"], rows)


def _series(heat, stage, bc, precision):
    for s in heat["series"]:
        if s["stage"].startswith(stage) and (s["bc"], s["precision"]) == (bc, precision) and s["status"] in TIMED:
            return {p["n"]: p for p in s["points"]}
    return None


def _half_over_float(heat, bc):
    """{N: stage 07's cell-updates/s in half over float} at every N from 384 of the sweep."""
    half, single = _series(heat, "07", bc, "half"), _series(heat, "07", bc, "float")
    return {n: half[n]["updates_per_s"] / single[n]["updates_per_s"] for n in half if n in single and n >= 384}


def heat_sweep(root, path=SWEEP):
    """Stage 07's share of a copy over the sweep (or the file at path, in its shape): at the multiples
    of the vector width (4 cells in float, 8 in half) and elsewhere, the least with its N, N = 512;
    then half over float."""
    heat = _load(root, path)["heat"]
    rows = []
    for precision in ("float", "half"):
        for bc in ("dirichlet", "neumann", "periodic"):
            pts = _series(heat, "07", bc, precision)
            if pts is None:
                continue
            width = 4 if precision == "float" else 8
            aligned = [p["fraction_of_copy"] for n, p in pts.items() if n % width == 0]
            other = [p["fraction_of_copy"] for n, p in pts.items() if n % width]
            least = min(pts.values(), key=lambda p: p["fraction_of_copy"])
            rows.append([f"{BOUNDARY_NAME[bc]} {precision}", _percent_span(aligned), _percent_span(other),
                         f"{_pct(least['fraction_of_copy'])} ({least['n']})", _pct(pts[512]["fraction_of_copy"])])
    for bc in ("dirichlet", "neumann", "periodic"):
        if _series(heat, "07", bc, "half") is None:
            continue
        ratio = _half_over_float(heat, bc)
        times = lambda x: f"{x:.2f}×"
        least = min(ratio, key=ratio.get)
        rows.append([f"half ÷ float, {BOUNDARY_NAME[bc]}, N ≥ 384",
                     _times_span([x for n, x in ratio.items() if n % 8 == 0]),
                     _times_span([x for n, x in ratio.items() if n % 8]), f"{times(ratio[least])} ({least})",
                     times(ratio[512])])
    return _rows(["series", "multiples of 4 (8 for half)", "other N", "least, at N", "at N = 512"],
                 ["---", "---:", "---:", "---:", "---:"], rows)


# --- stage 08 --------------------------------------------------------------------------------------

def fused_over_s(root):
    """Stage 08 over S against stage 07, Dirichlet float, at each N of the main file's S sweep."""
    records = [r for r in _load(root, MAIN)["heat"]["fused"]
               if (r["bc"], r["precision"]) == ("dirichlet", "float") and r["check"]["ok"]]
    sizes = sorted({r["n"] for r in records})
    steps = sorted({r["fused_steps"] for r in records if r["stage"].startswith("08")})
    rows = []
    for n in sizes:
        base = next(loop_rate(r) for r in records if r["n"] == n and r["stage"].startswith("07"))
        rate = {r["fused_steps"]: loop_rate(r) for r in records if r["n"] == n and r["stage"].startswith("08")}
        best = max(rate, key=rate.get)
        rows.append([n, f"{base / 1e9:.1f}"] + [_bold(f"{rate[s] / 1e9:.1f}", s == best) for s in steps]
                    + [_bold(f"{rate[best] / base:.2f}×", n == sizes[-1])])
    return _rows(["N", "stage 07"] + [f"S = {s}" for s in steps] + ["best against stage 07"],
                 ["---:"] * (len(steps) + 3), rows)


def _fused_pair_rates(root):
    """{(bc, precision): (stage 08's rate, stage 07's)} of the main file's pairs (heat_plot.fused_pairs,
    which temporal_blocking.png draws): stage 08 at one S against stage 07, at one N."""
    return pair_rates([r for r in _load(root, MAIN)["heat"]["fused"] if r["check"]["ok"]])[2]


def fused_pairs(root):
    """The pairs as a table: the speed-up, and stage 07's rate → stage 08's, in G cell-updates/s."""
    cells = _fused_pair_rates(root)
    precisions = ("float", "double", "half", "bf16")
    best = max(cells, key=lambda key: cells[key][0] / cells[key][1])
    rows = [[BOUNDARY_NAME[bc]] + [_bold(f"{cells[(bc, p)][0] / cells[(bc, p)][1]:.2f}×", (bc, p) == best)
                                   + f" ({cells[(bc, p)][1] / 1e9:.0f} → {cells[(bc, p)][0] / 1e9:.0f})"
                                   for p in precisions] for bc in BOUNDARY_NAME]
    return _rows(["boundaries"] + list(precisions), ["---"] + ["---:"] * len(precisions), rows)


def fused_sweep(root):
    """Stage 08 at its best S at each N (heat_plot.best_fused) over the sweep: its least speed-up over
    stage 07 (same N, boundaries and precision), at the multiples of 4 and elsewhere, at N = 512, the
    most, and how often each S was the best."""
    rows = []
    for (bc, precision), pts in best_fused(_load(root, SWEEP)["heat"]).items():
        at = {p["n"]: p for p in pts}
        text = lambda p: f"{p['speedup_over_07']:.2f}× ({p['n']}, S = {p['fused_steps']})"
        least = lambda ps: text(min(ps, key=lambda p: p["speedup_over_07"]))
        rows.append([f"08 {BOUNDARY_NAME[bc]} {precision}", least(pts), least([p for p in pts if p["n"] % 4 == 0]),
                     least([p for p in pts if p["n"] % 4]), text(at[512]),
                     text(max(pts, key=lambda p: p["speedup_over_07"])),
                     ", ".join(f"{S}: {count}" for S, count in sorted(best_s_wins(pts).items()))])
    return _rows(["series", "least", "least, N a multiple of 4", "least, other N", "N = 512", "most",
                  "best S: at how many N"], ["---", "---:", "---:", "---:", "---:", "---:", "---"], rows)


def fused_ncu(root, path=FUSED_NCU):
    """Stage 08's pass (the wide tiles and the narrow last column, float, S = 4) under Nsight Compute:
    per update kept, and the two kernels' times one after the other beside the pass timed without it."""
    rows = []
    for r in _load(root, path)["records"]:
        wide, narrow = (next(k for k in r["kernels"] if k["kernel"].startswith(kind)) for kind in ("wide", "narrow"))
        levels = [k["ffma"] / 2 / r["updates_per_pass"] for k in (wide, narrow)]
        rows.append([r["n"], BOUNDARY_NAME[r["bc"]], f"{r['instructions_per_update']:.1f}",
                     f"{r['cell_levels_per_update']:.2f} ({levels[0]:.2f} + {levels[1]:.2f})",
                     f"{r['dram_bytes_per_update']:.2f}", f"{wide['us']:.1f} + {narrow['us']:.1f}",
                     f"{r['timed_pass_us']:.0f}", f"{r['speedup']:.2f}× ({r['g_updates_per_s_08']:.0f} G/s)"])
    return _rows(["N", "boundaries", "instructions/update", "cell-levels/update (wide + narrow)", "DRAM bytes/update",
                  "wide + narrow (µs)", "pass (µs)", "speed-up over stage 07 (stage 08's rate)"],
                 ["---:", "---", "---:", "---:", "---:", "---:", "---:", "---:"], rows)


# --- stage 10 --------------------------------------------------------------------------------------

def high_order_orders(root):
    """Stage 10's three kernels per order at N = 512 and 256: median ms, speed-up over the basic
    kernel, share of a copy."""
    records = _load(root, ORDERS)["records"]
    at = {(r["order"], r["n"], r["kernel"]): r for r in records}
    rows = []
    for R in sorted({r["order"] for r in records}):
        for n in sorted({r["n"] for r in records}, reverse=True):
            ms = {k: at[(R, n, k)]["time_ms"]["median"] for k in ("basic", "tiled", "fast")}
            rows.append([R, at[(R, n, "basic")]["points"], n] + [f"{ms[k]:.3f}" for k in ("basic", "tiled", "fast")]
                        + [f"{ms['basic'] / ms[k]:.2f}×" for k in ("tiled", "fast")]
                        + [" / ".join(_pct(at[(R, n, k)]["fraction_of_copy"]) for k in ("basic", "tiled", "fast"))])
    return _rows(["R", "points", "N", "basic", "tiled", "fast", "tiled vs basic", "fast vs basic",
                  "% of copy: basic / tiled / fast"], ["---:"] * 9, rows)


# The book's bound counts 2 operations per point, 2(6R + 1)/4 (ERRATA.md, E2); where the chapter
# prints a figure for an order, the table says which.
BOOK_BOUND_NOTES = {1: "(the book prints 3.25)", 3: "(section 8.3)"}


def high_order_model(root):
    """Stage 10's textbook OP/B per order, as the harness reports it for each kernel at N = 512
    (the fast kernel's with the chunk Z and the block BX × BY it ran with there), beside the bound
    (12R+1)/4 and the book's 2P/4."""
    records = [r for r in _load(root, ORDERS)["records"] if r["n"] == 512]
    at = {(r["order"], r["kernel"]): r for r in records}
    orders = sorted({r["order"] for r in records})
    tiled = {at[(R, "tiled")]["tile"]["in_tile_dim"] for R in orders}
    if len(tiled) != 1:
        raise ValueError(f"{ORDERS}: the table wants one tile size at N = 512, got {tiled}")
    (T,) = tiled

    def usual_and_others(of, show):
        """The value most orders share, and the orders that differ ("R = 2: ...")."""
        usual = max(set(of.values()), key=list(of.values()).count)
        return usual, ", ".join(f"R = {R}: {show(v)}" for R, v in of.items() if v != usual)
    blocks, other_blocks = usual_and_others(
        {R: re.search(r"BX×BY = (\d+×\d+)", at[(R, "fast")]["model"]["formula"]).group(1) for R in orders},
        lambda b: b.replace("×", " × "))
    Z, other_z = usual_and_others({R: at[(R, "fast")]["tile"]["z_coarsening"] for R in orders}, lambda z: f"Z = {z}")
    fast_head = (f"fast, {blocks.replace('×', ' × ')} cells" + (f" ({other_blocks})" if other_blocks else "")
                 + f", Z = {Z}" + (f" ({other_z})" if other_z else ""))
    rows = []
    for R in orders:
        book = 2 * (6 * R + 1) / 4
        note = BOOK_BOUND_NOTES.get(R)
        rows.append([R, 6 * R + 1] + [f"{at[(R, k)]['model']['opb']:.2f}" for k in ("basic", "tiled", "fast")]
                    + [f"{(12 * R + 1) / 4:.2f}", _bold(f"{book:g}", R == 3) + (f" {note}" if note else "")])
    return _rows(["R", "points", "basic", f"tiled, T = {T}, Z = {T}−2R", fast_head, "bound (12R+1)/4",
                  "the book's bound, 2P/4"], ["---:"] * 7, rows)


def high_order_ncu(root):
    """Stage 10's three kernels under Nsight Compute at N = 512: bytes per interior cell at each
    level, thread instructions per cell, and the share of cycles a scheduler issued."""
    records = _load(root, ORDERS_NCU)["records"]
    kernels = ("basic", "tiled", "fast")
    rows = [[r["order"], r["kernel"], f"{r['dram_read_bytes_per_cell']:.2f} + {r['dram_write_bytes_per_cell']:.2f}",
             f"{r['l2_bytes_per_cell']:.1f}", f"{r['l1_global_load_bytes_per_cell']:.1f}",
             f"{r['thread_instructions_per_cell']:.1f}", f"{r['issue_active_pct']:.0f}%"]
            for r in sorted(records, key=lambda r: (r["order"], kernels.index(r["kernel"])))]
    return _rows(["R", "kernel", "DRAM read + write", "L2", "L1, global loads", "thread instructions per cell",
                  "issue active"], ["---:", "---", "---:", "---:", "---:", "---:", "---:"], rows)


# Stage 10's fast kernel moves 16, 8 or 4 bytes per access as N is a multiple of 4, another even
# number or odd: the three classes its sweep is summed up in (0, 1, 2).
def _access_class(n):
    return 0 if n % 4 == 0 else 1 if n % 2 == 0 else 2


def high_order_sweep(root, path=SWEEP):
    """Stage 10's fast kernel over the sweep (the sweep file's high_order part): its share of a copy
    per order at N = 512, at the multiples of 4, the other even N and the odd N (16-, 8- and 4-byte
    accesses), and the least with its N."""
    records = _load(root, path)["high_order"]["points"]
    rows = []
    for R in sorted({r["order"] for r in records}):
        pts = {r["n"]: r["fraction_of_copy"] for r in records if r["order"] == R}
        least = min(pts, key=pts.get)
        rows.append([R, _pct(pts[512])] + [_percent_span([x for n, x in pts.items() if _access_class(n) == c])
                                           for c in range(3)] + [f"{_pct(pts[least])} ({least})"])
    return _rows(["R", "N = 512", "N a multiple of 4", "other even N", "odd N", "least, at N"], ["---:"] * 6, rows)


# The variants of the ablation run, in the table's order, and their columns.
ABLATIONS = (("b", "shipped"), ("a1", "no halo rows"), ("a2", "no sides"), ("a3", "no halo"),
             ("a4", "no stores"), ("a7", "ring and sums only"))


def high_order_ablations(root, path=ORDERS_ABLATIONS_H200):
    """Stage 10's fast kernel with one memory stream or more left out (timing only): the best of the
    rounds, % of a copy, at N = 512 for every order, then R = 4 at the file's other sizes."""
    best = {}
    for r in _load(root, path)["records"]:
        key = (r["variant"], r["order"], r["n"])
        best[key] = max(best.get(key, 0.0), r["fraction_of_copy"])
    top = max(R for _, R, _ in best)
    cells = [(R, 512) for R in sorted({R for _, R, _ in best})] + [(top, n) for n in sorted({n for _, _, n in best}) if n != 512]
    rows = [[R, n] + [_pct(best[(v, R, n)]) for v, _ in ABLATIONS] for R, n in cells]
    return _rows(["R", "N"] + [name for _, name in ABLATIONS], ["---:"] * (2 + len(ABLATIONS)), rows)


# --- the README's stage table ----------------------------------------------------------------------
# Its rows are prose; each must still contain these phrases, made from the same files. A phrase that
# is missing is reported (the row is edited by hand).

def stage_table_phrases(root):
    """{the start of a row of the README's stage table: [the phrases it must contain]}."""
    doc = _load(root, MAIN)
    at512 = {r["stage"]: r for r in doc["runs"] if r["n"] == 512}
    basic = at512["02_basic_sweep"]["time_ms"]["median"]
    rows = {}
    for stage, name in (("02_basic_sweep", "02 basic sweep"), ("03_shared_tiling", "03 shared-memory tiling"),
                        ("04_thread_coarsening", "04 thread coarsening"), ("05_register_tiling", "05 register tiling"),
                        ("06_roofline", "06 the roofline")):
        r = at512[stage]
        rows[f"| [{name}]"] = [f"| {_pct(r['fraction_of_copy'])}, {basic / r['time_ms']['median']:.2f}× |"]
    sweep = _load(root, SWEEP)
    roofline = [p["fraction_of_copy"] for p in sweep["points"] if p["stage"] == "06_roofline" and 256 <= p["n"] <= 1024]
    rows["| [06 the roofline]"].append(f"({_percent_span(roofline)} at every N from 256 to 1024)")
    # Stage 07's row: its second run at the sweep's sizes (today's stage 07, lesson 07); stage 08's
    # row: the sweep, whose speed-ups divide by the stage 07 of its own run.
    heat07 = _load(root, EVERY_N)["heat"]
    dirichlet = _series(heat07, "07", "dirichlet", "float")
    neumann = _series(heat07, "07", "neumann", "float")
    ratio = {bc: _half_over_float(heat07, bc) for bc in ("dirichlet", "neumann", "periodic")}
    rows["| [07 the time loop]"] = [
        f"Dirichlet at least {_pct(min(p['fraction_of_copy'] for p in dirichlet.values()))} at every N",
        f"Neumann at least {_pct(min(p['fraction_of_copy'] for p in neumann.values()))} at every N",
        f"half {ratio['dirichlet'][512]:.2f}× float at N = 512 (Dirichlet)",
        f"{_times_span(ratio['dirichlet'].values())} at every N from 384 (Dirichlet)",
        f"at least {min(x for r in ratio.values() for n, x in r.items() if n % 8 == 0):.2f}× at every multiple "
        "of 8 from 384 under every boundary condition",
        f"{_times_span([x for n, x in ratio['neumann'].items() if n % 8])} (Neumann) and "
        f"{_times_span([x for n, x in ratio['periodic'].items() if n % 8])} (periodic) off them"]
    pairs = {key: rate08 / rate07 for key, (rate08, rate07) in _fused_pair_rates(root).items()}
    speedup = {p["n"]: p["speedup_over_07"] for p in best_fused(sweep["heat"])[("dirichlet", "float")]}
    rows["| [08 temporal blocking]"] = [
        f"Dirichlet: {pairs[('dirichlet', 'float')]:.2f}× stage 07 at N = 512",
        f"at least {min(speedup.values()):.2f}× at every N from 256 to 1024",
        f"({min(x for n, x in speedup.items() if n % 4 == 0):.2f}× at multiples of 4",
        f"Neumann {pairs[('neumann', 'float')]:.2f}×, periodic {pairs[('periodic', 'float')]:.2f}×",
        f"double {_times_span([x for (bc, p), x in pairs.items() if p == 'double'])}",
        f"({_times_span([x for (bc, p), x in pairs.items() if p in ('half', 'bf16')])} at N = 512"]
    orders = {(r["order"], r["kernel"]): r for r in _load(root, ORDERS)["records"] if r["n"] == 512}
    top = max(R for R, _ in orders)
    over_basic = [orders[(R, "basic")]["time_ms"]["median"] / orders[(R, "fast")]["time_ms"]["median"] for R, _ in orders]
    every_n = _load(root, SWEEP)["high_order"]["points"]
    least = {(R, c): min(r["fraction_of_copy"] for r in every_n if r["order"] == R and _access_class(r["n"]) == c)
             for R in (1, top) for c in range(3)}
    rows["| [10 higher orders]"] = [
        f"fast kernel {_pct(orders[(1, 'fast')]['fraction_of_copy'])} (R = 1) to "
        f"{_pct(orders[(top, 'fast')]['fraction_of_copy'])} (R = {top}) at N = 512",
        f"{_times_span(over_basic)} the basic kernel",
        f"at least {_pct(least[(1, 0)])} (R = 1) and {_pct(least[(top, 0)])} (R = {top}) at multiples of 4, "
        f"{_pct(least[(1, 1)])} and {_pct(least[(top, 1)])} at other even N, "
        f"{_pct(least[(1, 2)])} and {_pct(least[(top, 2)])} at odd N"]
    return rows


def missing_phrases(root):
    """[(row start, phrase)] of the README's stage table that the shipped files no longer support."""
    lines = (root / "README.md").read_text(encoding="utf-8").split("\n")
    missing = []
    for start, phrases in stage_table_phrases(root).items():
        row = next((line for line in lines if line.startswith(start)), None)
        missing += [(start, phrase) for phrase in phrases if row is None or phrase not in row]
    return missing


TABLES = {"heat_n512": heat_n512, "heat_sweep": heat_sweep, "heat_every_n": lambda root: heat_sweep(root, EVERY_N),
          "fused_over_s": fused_over_s,
          "fused_pairs": fused_pairs, "fused_sweep": fused_sweep, "high_order_orders": high_order_orders,
          "high_order_sweep": high_order_sweep, "high_order_model": high_order_model,
          "high_order_sweep_h200": lambda root: high_order_sweep(root, SWEEP_H200),
          "high_order_ncu": high_order_ncu, "high_order_ablations": high_order_ablations, "fused_ncu": fused_ncu,
          "fused_ncu_final": lambda root: fused_ncu(root, FUSED_NCU_FINAL)}


# A results file or figure named in a lesson's text: plots/results/runs/....json, or a figure's link
# (../../plots/figures/<gpu>/<name>.png).
NAMED_FILE = re.compile(r"plots/(?:results|figures)/[\w./-]+?\.(?:json|png)")


def named_files(root):
    """[(lesson, path)] of the results files and figures each lesson names."""
    return [(path.relative_to(root), name) for path in lessons(root)
            for name in sorted(set(NAMED_FILE.findall(path.read_text(encoding="utf-8"))))]


def missing_files(root):
    """named_files that the repository lacks."""
    return [(where, name) for where, name in named_files(root) if not (root / name).is_file()]


class TableError(Exception):
    pass


def regions(text, where):
    """[(name, first line, end line)] of the tables in a lesson's lines (the rows between the markers)."""
    lines, found, start = text.split("\n"), [], None
    for i, line in enumerate(lines):
        begin = BEGIN.match(line)
        if begin:
            if start is not None:
                raise TableError(f"{where}:{i + 1}: a table begins before the one at line {start[1]} ends")
            if begin.group(1) not in TABLES:
                raise TableError(f"{where}:{i + 1}: no table is named {begin.group(1)!r} "
                                 f"(plots/lesson_tables.py makes: {', '.join(TABLES)})")
            start = (begin.group(1), i + 1)
        elif line == END:
            if start is None:
                raise TableError(f"{where}:{i + 1}: '{END}' with no table begun")
            found.append((start[0], start[1], i))
            start = None
    if start is not None:
        raise TableError(f"{where}:{start[1]}: the table {start[0]!r} has no '{END}' line")
    return lines, found


def lessons(root):
    return sorted(root.glob("chapters/*/README.md")) + [root / "README.md"]


def update(root, write):
    """Each table compared with what its files make now: [(file, name, lines now, lines made)] of
    those that differ; with `write`, those are rewritten."""
    stale, made = [], {}
    for path in lessons(root):
        where = path.relative_to(root)
        lines, found = regions(path.read_text(encoding="utf-8"), where)
        for name, first, end in reversed(found):
            if name not in made:  # a blank line each side, so that Markdown sees a table between comments
                made[name] = [""] + TABLES[name](root) + [""]
            if lines[first:end] != made[name]:
                stale.append((where, name, lines[first:end], made[name]))
                lines[first:end] = made[name]
        if write and any(s[0] == where for s in stale):
            path.write_text("\n".join(lines), encoding="utf-8")
    return stale


def after_writing(root, path):
    """Lines to print after a bench wrote `path`: the lessons' tables that no longer match it, if
    it is a file they quote (none otherwise)."""
    quoted = {(root / f).resolve() for f in QUOTED}
    if Path(path).resolve() not in quoted:
        return []
    try:
        stale, missing = update(root, write=False), missing_phrases(root)
    except (TableError, OSError, KeyError, ValueError) as e:
        return [f"the lessons quote this file, and their tables could not be made from it: {e}"]
    return [f"{where}: table {name} differs from the new results" for where, name, _, _ in stale] + [
        f"README.md: the stage table's row '{start[3:-1]}' no longer says what the results give ('{phrase}')"
        for start, phrase in missing] + (
        ["the lessons quote this file: `python3 plots/lesson_tables.py --write` remakes their tables; "
         "the README's rows are edited by hand"] if stale or missing else [])


def main(argv):
    write = "--write" in argv
    root = Path(next((a for a in argv if not a.startswith("--")), ROOT))
    try:
        stale, missing, absent = update(root, write), missing_phrases(root), missing_files(root)
    except (TableError, OSError, KeyError, ValueError) as e:
        print(f"lesson tables: {e}", file=sys.stderr)
        return 2
    for where, name in absent:
        print(f"{where} names {name}, which is not in the repository")
    for start, phrase in missing:
        print(f"README.md: the stage table's row '{start[3:-1]}' should say '{phrase}' (from the shipped results): "
              "edit it by hand")
    for where, name, now, made in stale:
        verb = "rewritten" if write else "differs from its results file"
        print(f"{where}: table {name} {verb}")
        if not write:
            for old, new in zip(now + [""] * len(made), made + [""] * len(now)):
                if old != new:
                    print(f"    lesson: {old}\n    file:   {new}")
                    break
    if stale and not write:
        print("run `python3 plots/lesson_tables.py --write`, then read the prose around each table again")
        return 1
    return 1 if missing or absent else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
