"""Checks a benchmark results file ("schema": "pmpp-stencil-results/1") before anything is drawn.

Standard library only, so the benchmark can import it without matplotlib:

    from results_schema import ResultsError, load_results, validate
    doc = load_results("plots/results/h100.json")   # reads and validates, or raises ResultsError
    validate(doc)                                   # validates a dict already in memory

Every error names the field at fault, e.g. "runs[3].time_ms.median is missing" or
"no run of 02_basic_sweep solution at n=512 to compare against".

What is checked, beyond types:
- schema is exactly SCHEMA;
- a run whose check passed carries its timings (time_ms, copy_ms and the rates); a failed run
  may leave them out (it is never plotted);
- numbers are finite numbers (true/false, strings and NaN are refused);
- at most one run per (stage, implementation, n), one alternative per (name, n);
- every n that has a timed run or alternative also has a passing, timed run of the baseline
  (BASELINE_STAGE, solution), since every speed-up is measured against it;
- a run may carry "device_peak" (the compute roof, derived from the device: sm_count,
  clock_mhz, fp32_lanes_per_sm, fp32_gflops; fp32_gflops null where the architecture is unknown);
- the optional "heat" section (stage 07; absent or null in older files) holds lists runs,
  overhead, accuracy and jacobi and one record or null, snapshots. Its timed records that passed
  carry their timings (overhead: the loop and the CUDA graph too), every record its analytic
  error, each picture a rectangle of finite numbers of one shape; at most one record per
  (bc, precision, n) in runs and accuracy, per n in overhead, per (precision, n) in jacobi. Its
  optional list fused (stage 08 against stage 07) holds timed records with fused_steps, a tile
  (null or [rows, columns]) and the model's DRAM bytes per update for it (model_bytes_per_update,
  null without tiles), at most one per (stage, fused_steps, n); and fused_run (date, commit, nvcc,
  driver), where `bench --only-08` measured that part after the rest.

The sweep (`course.py bench --sweep`) has a file of its own, "schema": "pmpp-stencil-sweep/1",
in plots/results/sweep/: validate_sweep(doc) and load_sweep(path) check it the same way.
"""
import json
import math
import re
from pathlib import Path

SCHEMA = "pmpp-stencil-results/1"
SWEEP_SCHEMA = "pmpp-stencil-sweep/1"
BASELINE_STAGE = "02_basic_sweep"
IMPLEMENTATIONS = ("solution", "exercise")
STAGE_RE = re.compile(r"^\d\d_[A-Za-z0-9_]+$")

# The fields a run that passed its check must carry, and that a failed run may omit.
TIMING_STATS = ("time_ms", "copy_ms")
RATES = ("points_per_s", "gflops", "gbps", "copy_gbps", "fraction_of_copy")

# Stage 07 (the heat equation): a timed record that passed its check carries these; the loop
# and its CUDA graph only when it ran steps.
BOUNDARIES = ("dirichlet", "neumann", "periodic")
PRECISIONS = ("float", "double", "half", "bf16")
HEAT_TIMING = ("step_ms", "copy_ms")
HEAT_RATES = ("updates_per_s", "gbps", "copy_gbps", "fraction_of_copy")
LOOP_TIMING = ("loop_ms", "graph_ms")
LOOP_RATES = ("loop_us_per_step", "graph_us_per_step", "loop_over_steps")


class ResultsError(Exception):
    """A results file that cannot be plotted. str() is "<path>: <detail>" when the path is known."""

    def __init__(self, detail, path=None):
        self.detail = detail
        self.path = None if path is None else str(path)
        super().__init__(detail if path is None else f"{path}: {detail}")


# --- small typed accessors; `where` is the field's name as the message will show it ---------

def _kind(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return f"the string {v!r}" if len(v) <= 40 else "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


def _field(obj, key, where, required=True):
    """obj[key], or None when absent and optional; raises when absent and required."""
    if key not in obj:
        if required:
            raise ResultsError(f"{where}{key} is missing")
        return None
    return obj[key]


def _object_at(v, where):
    """v must be an object; `where` names it (a field, or an element of a list)."""
    if not isinstance(v, dict):
        raise ResultsError(f"{where} is {_kind(v)}, expected an object")
    return v


def _object(obj, key, where, required=True):
    v = _field(obj, key, where, required)
    if v is None and not required:
        return None
    return _object_at(v, f"{where}{key}")


def _list(obj, key, where, required=True):
    v = _field(obj, key, where, required)
    if v is None and not required:
        return []
    if not isinstance(v, list):
        raise ResultsError(f"{where}{key} is {_kind(v)}, expected a list")
    return v


def _string(obj, key, where, required=True, nullable=False):
    v = _field(obj, key, where, required)
    if v is None and (nullable or not required):
        return None
    if not isinstance(v, str):
        raise ResultsError(f"{where}{key} is {_kind(v)}, expected a string")
    return v


def _bool(obj, key, where, required=True):
    v = _field(obj, key, where, required)
    if v is None and not required:
        return None
    if not isinstance(v, bool):
        raise ResultsError(f"{where}{key} is {_kind(v)}, expected true or false")
    return v


def _number(obj, key, where, required=True, nullable=False, positive=False, nonnegative=False):
    v = _field(obj, key, where, required)
    if v is None and (nullable or not required):
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ResultsError(f"{where}{key} is {_kind(v)}, expected a number")
    if not math.isfinite(v):
        raise ResultsError(f"{where}{key} is {v}, expected a finite number")
    if positive and v <= 0:
        raise ResultsError(f"{where}{key} is {v}, expected a number > 0")
    if nonnegative and v < 0:
        raise ResultsError(f"{where}{key} is {v}, expected a number >= 0")
    return v


def _integer(obj, key, where, required=True, minimum=None):
    v = _field(obj, key, where, required)
    if v is None and not required:
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise ResultsError(f"{where}{key} is {_kind(v)}, expected an integer")
    if minimum is not None and v < minimum:
        raise ResultsError(f"{where}{key} is {v}, expected an integer >= {minimum}")
    return v


def _one_of(obj, key, where, choices):
    v = _string(obj, key, where)
    if v not in choices:
        raise ResultsError(f"{where}{key} is {v!r}, expected one of " + ", ".join(repr(c) for c in choices))
    return v


def _stage(obj, key, where):
    v = _string(obj, key, where)
    if not STAGE_RE.match(v):
        raise ResultsError(f"{where}{key} is {v!r}, expected a stage name like '02_basic_sweep'")
    return v


def _stats(obj, key, where):
    s = _object(obj, key, where)
    w = f"{where}{key}."
    for k in ("median", "min", "max"):
        _number(s, k, w, positive=True)
    _integer(s, "reps", w, minimum=1)
    if not s["min"] <= s["median"] <= s["max"]:
        raise ResultsError(f"{where}{key}: expected min <= median <= max, got "
                           f"{s['min']} / {s['median']} / {s['max']}")
    return s


# --- the parts of the file ------------------------------------------------------------------

def _check_block(obj, where, harness):
    c = _object(obj, "check", where)
    w = f"{where}check."
    ok = _bool(c, "ok", w)
    _number(c, "max_rel_err", w, required=harness, nullable=True, nonnegative=True)
    if harness:
        for k in ("wrong", "unwritten", "boundary_modified"):
            _integer(c, k, w, required=False, minimum=0)
        for k in ("guard_violated", "input_modified"):
            _bool(c, k, w, required=False)
    return ok


def _resources(r, w):
    res = _object(r, "resources", w, required=False)
    if res is not None:
        for k in ("threads_per_block", "shared_bytes", "registers", "blocks_per_sm"):
            _integer(res, k, w + "resources.", required=False, minimum=0)
        _number(res, "occupancy", w + "resources.", required=False, nonnegative=True)


def _device_peak(r, w):
    peak = _object(r, "device_peak", w, required=False)
    if peak is not None:
        w += "device_peak."
        _integer(peak, "sm_count", w, minimum=1)
        _number(peak, "clock_mhz", w, positive=True)
        _integer(peak, "fp32_lanes_per_sm", w, minimum=0)
        _number(peak, "fp32_gflops", w, nullable=True, positive=True)


def _run(r, i):
    w = f"runs[{i}]."
    _object_at(r, f"runs[{i}]")
    _string(r, "device", w)
    _stage(r, "stage", w)
    _string(r, "title", w)
    _string(r, "figure", w)
    _one_of(r, "implementation", w, IMPLEMENTATIONS)
    _integer(r, "n", w, minimum=3)
    ok = _check_block(r, w, harness=True)
    tile = _object(r, "tile", w, required=False)
    if tile is not None:
        for k in ("in_tile_dim", "out_tile_dim", "z_coarsening"):
            _integer(tile, k, w + "tile.", required=False, minimum=0)
    model = _object(r, "model", w)
    _number(model, "opb", w + "model.", positive=True)
    _string(model, "formula", w + "model.")
    _resources(r, w)
    _device_peak(r, w)
    if ok:
        # A passing run is plotted: everything the figures read must be there.
        for k in TIMING_STATS:
            _stats(r, k, w)
        for k in RATES:
            _number(r, k, w, positive=True)
    else:
        # A failed run is never plotted; what it carries must still be well formed.
        for k in TIMING_STATS:
            if r.get(k) is not None:
                _stats(r, k, w)
        for k in RATES:
            _number(r, k, w, required=False, nullable=True)


def _profile(p, i):
    w = f"profiles[{i}]."
    _object_at(p, f"profiles[{i}]")
    _stage(p, "stage", w)
    _one_of(p, "implementation", w, IMPLEMENTATIONS)
    _integer(p, "n", w, minimum=3)
    # A counter Nsight Compute could not read is null; the figures leave it out.
    for k in ("flops", "global_load_bytes", "dram_read_bytes", "dram_write_bytes"):
        _number(p, k, w, nullable=True, nonnegative=True)
    for k in ("opb_global", "opb_dram"):
        _number(p, k, w, nullable=True, positive=True)


def _alternative(a, i):
    w = f"alternatives[{i}]."
    _object_at(a, f"alternatives[{i}]")
    _string(a, "name", w)
    _integer(a, "n", w, minimum=3)
    ok = _check_block(a, w, harness=False)
    if ok:
        _stats(a, "time_ms", w)
        _number(a, "gbps", w, positive=True)
        _number(a, "fraction_of_copy", w, positive=True)
    return ok


def _convergence(c):
    w = "convergence."
    _string(c, "stage", w, required=False)
    _string(c, "kind", w, required=False)
    _string(c, "device", w, required=False, nullable=True)
    rows = _list(c, "rows", w)
    if not rows:
        raise ResultsError("convergence.rows is empty")
    for i, row in enumerate(rows):
        rw = f"convergence.rows[{i}]."
        _object_at(row, f"convergence.rows[{i}]")
        _one_of(row, "derivative", rw, ("first", "second"))
        _integer(row, "points", rw, minimum=2)
        _integer(row, "order", rw, required=False, minimum=1)
        _one_of(row, "precision", rw, ("double", "float"))
        _number(row, "h", rw, positive=True)
        _number(row, "error", rw, nullable=True, nonnegative=True)  # null: not finite (not drawn)
    for i, m in enumerate(_list(c, "measured_order", w, required=False)):
        mw = f"convergence.measured_order[{i}]."
        _object_at(m, f"convergence.measured_order[{i}]")
        _one_of(m, "derivative", mw, ("first", "second"))
        _integer(m, "points", mw, minimum=2)
        _one_of(m, "precision", mw, ("double", "float"))
        _number(m, "slope", mw, nullable=True)
    be = c.get("book_example")
    if be is not None and not isinstance(be, dict):
        raise ResultsError(f"convergence.book_example is {_kind(be)}, expected an object or null")


# --- stage 07, the heat equation (the optional "heat" section) -------------------------------

def _plane(shot, w, ok):
    """A picture of the middle plane: a non-empty rectangle of finite numbers. A failed run may hold
    null (not finite) cells; it is never drawn."""
    plane = _list(shot, "plane", w)
    if not plane:
        raise ResultsError(f"{w}plane is empty")
    for j, row in enumerate(plane):
        if not isinstance(row, list) or not row:
            raise ResultsError(f"{w}plane[{j}] is {'empty' if row == [] else _kind(row)}, expected a list of numbers")
        if len(row) != len(plane[0]):
            raise ResultsError(f"{w}plane[{j}] has {len(row)} values, expected {len(plane[0])} like plane[0]")
        for k, v in enumerate(row):
            if v is None and not ok:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ResultsError(f"{w}plane[{j}][{k}] is {_kind(v)}, expected a number")
            if not math.isfinite(v):
                raise ResultsError(f"{w}plane[{j}][{k}] is {v}, expected a finite number")
    return len(plane), len(plane[0])


def _heat_record(r, where, timed):
    """One record of the stage 07 program. timed: a record that passed its check must carry its
    timings (the timed runs); --check-only records (accuracy, snapshots) may carry none."""
    _object_at(r, where)
    w = where + "."
    _string(r, "device", w)
    _stage(r, "stage", w)
    _string(r, "title", w, required=False)
    _one_of(r, "implementation", w, IMPLEMENTATIONS)
    _integer(r, "n", w, minimum=3)
    _one_of(r, "bc", w, BOUNDARIES)
    _one_of(r, "precision", w, PRECISIONS)
    _integer(r, "bytes_per_cell", w, required=False, minimum=1)
    _integer(r, "cells_per_thread", w, required=False, minimum=1)
    steps = _integer(r, "steps", w, minimum=0)
    for k in ("dt", "r", "h", "alpha"):
        _number(r, k, w, positive=True)
    _number(r, "t_end", w, nonnegative=True)
    c = _object(r, "check", w)
    cw = w + "check."
    ok = _bool(c, "ok", cw)  # false also when Neumann or periodic boundaries lost heat
    _integer(c, "steps_checked", cw, minimum=0)
    _number(c, "max_err", cw, nullable=True, nonnegative=True)
    _number(c, "tolerance", cw, nonnegative=True)
    for k in ("wrong", "unwritten", "ghosts_wrong"):
        _integer(c, k, cw, required=False, minimum=0)
    if _field(r, "conservation", w) is not None:  # null: Dirichlet boundaries do not conserve heat
        cons = _object(r, "conservation", w)
        _number(cons, "drift", w + "conservation.", nullable=True, nonnegative=True)
        _number(cons, "tolerance", w + "conservation.", nonnegative=True)
        _bool(cons, "ok", w + "conservation.")
    _number(r, "analytic_error", w, nullable=not ok, nonnegative=True)
    _list(r, "growth", w, required=False)
    _resources(r, w)
    shape = None
    for i, shot in enumerate(_list(r, "snapshots", w, required=False)):
        sw = f"{w}snapshots[{i}]."
        _object_at(shot, f"{w}snapshots[{i}]")
        _integer(shot, "step", sw, minimum=0)
        _number(shot, "t", sw, nonnegative=True)
        here = _plane(shot, sw, ok)
        if shape is not None and here != shape:
            raise ResultsError(f"{sw}plane is {here[0]}×{here[1]}, expected {shape[0]}×{shape[1]} like "
                               f"{w}snapshots[0].plane")
        shape = here
    must = ok and timed  # a passing timed run is plotted: everything the figures read must be there
    for k in HEAT_TIMING + (LOOP_TIMING if steps > 0 else ()):
        if must or r.get(k) is not None:
            _stats(r, k, w)
    for k in HEAT_RATES:
        _number(r, k, w, required=must, nullable=not must, positive=must)
    for k in LOOP_RATES:
        _number(r, k, w, required=must and steps > 0, nullable=not (must and steps > 0), positive=must)
    return ok


def _jacobi(r, i):
    where = f"heat.jacobi[{i}]"
    _object_at(r, where)
    w = where + "."
    _one_of(r, "mode", w, ("jacobi",))
    _stage(r, "stage", w)
    _integer(r, "n", w, minimum=3)
    _one_of(r, "precision", w, PRECISIONS)
    _number(r, "tol", w, positive=True)
    _integer(r, "iterations", w, minimum=0)
    _number(r, "predicted_iterations", w, nonnegative=True)
    converged = _bool(r, "converged", w)
    _bool(r, "stalled", w)
    for k in ("residual", "error"):  # null: not finite, which a converged run cannot be
        _number(r, k, w, nullable=not converged, nonnegative=True)
    _number(r, "time_ms", w, nonnegative=True)
    for j, point in enumerate(_list(r, "history", w, required=False)):  # not drawn: its shape only
        if not isinstance(point, list) or len(point) != 2 or not all(
                v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in point):
            what = f"a list of {len(point)}" if isinstance(point, list) else _kind(point)
            raise ResultsError(f"{w}history[{j}] is {what}, expected a pair [iteration, residual] of numbers")


def _unique(records, part, fields):
    """At most one record per combination of `fields` (the last one being n) in heat.<part>."""
    seen = {}
    for i, r in enumerate(records):
        key = tuple(r[k] for k in fields)
        if key in seen:
            what = " ".join(str(v) for v in key[:-1])
            raise ResultsError(f"heat.{part}[{i}] repeats {what + ' ' if what else ''}at n={key[-1]} "
                               f"(first in heat.{part}[{seen[key]}])")
        seen[key] = i


def _heat(h):
    w = "heat."
    for part, timed in (("runs", True), ("overhead", True), ("accuracy", False)):
        records = _list(h, part, w)
        for i, r in enumerate(records):
            _heat_record(r, f"heat.{part}[{i}]", timed)
        _unique(records, part, ("bc", "precision", "n") if part != "overhead" else ("n",))
    for i, r in enumerate(h["overhead"]):
        if r["steps"] < 1:
            raise ResultsError(f"heat.overhead[{i}].steps is 0, expected a loop of at least 1 step")
    if _field(h, "snapshots", w) is not None:  # null: no pictures were taken
        _heat_record(_object(h, "snapshots", w), "heat.snapshots", timed=False)
        if not _list(h["snapshots"], "snapshots", "heat.snapshots."):
            raise ResultsError("heat.snapshots.snapshots is empty, expected the pictures")
    jacobi = _list(h, "jacobi", w)
    for i, r in enumerate(jacobi):
        _jacobi(r, i)
    _unique(jacobi, "jacobi", ("precision", "n"))
    fused = _list(h, "fused", w, required=False)  # stage 08 against 07; absent in older files
    for i, r in enumerate(fused):
        where = f"heat.fused[{i}]"
        _heat_record(r, where, timed=True)
        _integer(r, "fused_steps", where + ".", minimum=1)
        tile = r.get("tile")
        if tile is not None and not (isinstance(tile, list) and len(tile) == 2 and all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in tile)):
            raise ResultsError(f"{where}.tile is {tile!r}, expected null or [rows, columns] a block writes")
        _number(r, "model_bytes_per_update", where + ".", required=False, nullable=True, positive=True)
        if r["steps"] < 1:
            raise ResultsError(f"{where}.steps is 0, expected a loop of steps")
    _unique(fused, "fused", ("stage", "fused_steps", "n"))
    run = _object(h, "fused_run", w, required=False)  # when `bench --only-08` measured fused later
    if run is not None:
        for key in ("date", "commit", "nvcc", "driver"):
            _string(run, key, "heat.fused_run.")


def validate(doc):
    """Raises ResultsError naming the first bad field; returns None when `doc` can be plotted."""
    if not isinstance(doc, dict):
        raise ResultsError(f"the file holds {_kind(doc)}, expected one JSON object")
    schema = _field(doc, "schema", "")
    if schema != SCHEMA:
        raise ResultsError(f"schema is {schema!r}, expected {SCHEMA!r}")
    _string(doc, "gpu", "")
    _string(doc, "date", "")
    _string(doc, "commit", "")
    _string(doc, "nvcc", "", required=False, nullable=True)
    _string(doc, "driver", "", required=False, nullable=True)
    sizes = _list(doc, "sizes", "")
    for i, v in enumerate(sizes):
        if isinstance(v, bool) or not isinstance(v, int):
            raise ResultsError(f"sizes[{i}] is {_kind(v)}, expected an integer")
        if v < 3:
            raise ResultsError(f"sizes[{i}] is {v}, expected an integer >= 3")

    runs = _list(doc, "runs", "")
    seen = {}
    timed_ns = {}  # n -> the field that needs a baseline there
    for i, r in enumerate(runs):
        _run(r, i)
        key = (r["stage"], r["implementation"], r["n"])
        if key in seen:
            raise ResultsError(f"runs[{i}] repeats {key[0]} {key[1]} at n={key[2]} (first in runs[{seen[key]}])")
        seen[key] = i
        if r["check"]["ok"]:
            timed_ns.setdefault(r["n"], f"runs[{i}]")

    for i, p in enumerate(_list(doc, "profiles", "", required=False)):
        _profile(p, i)
    _string(doc, "profile_note", "", required=False, nullable=True)

    conv = doc.get("convergence")
    if conv is not None:
        if not isinstance(conv, dict):
            raise ResultsError(f"convergence is {_kind(conv)}, expected an object or null")
        _convergence(conv)

    heat = doc.get("heat")
    if heat is not None:
        if not isinstance(heat, dict):
            raise ResultsError(f"heat is {_kind(heat)}, expected an object or null")
        _heat(heat)

    seen = {}
    for i, a in enumerate(_list(doc, "alternatives", "", required=False)):
        if _alternative(a, i):
            timed_ns.setdefault(a["n"], f"alternatives[{i}]")
        key = (a["name"], a["n"])
        if key in seen:
            raise ResultsError(f"alternatives[{i}] repeats {key[0]!r} at n={key[1]} "
                               f"(first in alternatives[{seen[key]}])")
        seen[key] = i

    # Every speed-up is time(baseline) / time(stage) at the same n, from this file.
    base_ns = {r["n"] for r in runs if r["stage"] == BASELINE_STAGE and r["implementation"] == "solution"
               and r["check"]["ok"]}
    if not base_ns:
        failed = [i for i, r in enumerate(runs) if r["stage"] == BASELINE_STAGE and r["implementation"] == "solution"]
        if failed:
            raise ResultsError(f"the run of {BASELINE_STAGE} solution failed its check (runs[{failed[0]}]): "
                               "no baseline to compare against")
        raise ResultsError(f"no run of {BASELINE_STAGE} solution to compare against")
    for n, who in sorted(timed_ns.items()):
        if n not in base_ns:
            raise ResultsError(f"no passing run of {BASELINE_STAGE} solution at n={n} to compare {who} against")


# --- the sweep (course.py bench --sweep): its own file ---------------------------------------

def _sweep_point(r, i):
    w = f"points[{i}]."
    _object_at(r, f"points[{i}]")
    _stage(r, "stage", w)
    _one_of(r, "implementation", w, IMPLEMENTATIONS)
    _integer(r, "n", w, minimum=3)
    check = _object(r, "check", w)
    checked = _bool(check, "checked", w + "check.")
    ok = _bool(check, "ok", w + "check.", required=checked)
    if checked is False and ok is not None:
        raise ResultsError(f"{w}check.ok is given, but check.checked is false")
    for k in TIMING_STATS:
        _stats(r, k, w)
    for k in RATES:
        _number(r, k, w, positive=True)
    return checked, ok


def validate_sweep(doc):
    """Raises ResultsError naming the first bad field of a sweep file; None when it can be plotted.
    Each point is a timed run of one stage at one N (the harness's --time-only record) and says
    whether that N was also checked against the CPU reference (check.checked) and passed (check.ok)."""
    if not isinstance(doc, dict):
        raise ResultsError(f"the file holds {_kind(doc)}, expected one JSON object")
    schema = _field(doc, "schema", "")
    if schema != SWEEP_SCHEMA:
        raise ResultsError(f"schema is {schema!r}, expected {SWEEP_SCHEMA!r}")
    for k in ("gpu", "date", "commit"):
        _string(doc, k, "")
    _string(doc, "nvcc", "", required=False, nullable=True)
    _string(doc, "driver", "", required=False, nullable=True)
    _integer(doc, "checked_up_to", "", minimum=0)
    points = _list(doc, "points", "")
    if not points:
        raise ResultsError("points is empty")
    seen = {}
    for i, r in enumerate(points):
        checked, _ = _sweep_point(r, i)
        key = (r["stage"], r["implementation"], r["n"])
        if key in seen:
            raise ResultsError(f"points[{i}] repeats {key[0]} {key[1]} at n={key[2]} (first in points[{seen[key]}])")
        seen[key] = i
        if checked != (r["n"] <= doc["checked_up_to"]):
            raise ResultsError(f"points[{i}].check.checked is {str(checked).lower()}, but checked_up_to is "
                               f"{doc['checked_up_to']} and n is {r['n']}")


def _read_json(path):
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise ResultsError("no such file", path) from None
    except IsADirectoryError:
        raise ResultsError("is a directory, expected a results file", path) from None
    except OSError as e:
        raise ResultsError(f"cannot read: {e.strerror or e}", path) from None
    if not raw.strip():
        raise ResultsError("file is empty", path)
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ResultsError(f"not valid JSON: not UTF-8 text (byte {e.start})", path) from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"not valid JSON: {e.msg} (line {e.lineno}, column {e.colno})", path) from None
    return doc


def load_results(path, check=validate):
    """Reads and validates a results file; raises ResultsError for anything that cannot be plotted."""
    doc = _read_json(path)
    try:
        check(doc)
    except ResultsError as e:
        raise ResultsError(e.detail, path) from None
    return doc


def load_sweep(path):
    """Reads and validates a sweep file (validate_sweep)."""
    return load_results(path, check=validate_sweep)
