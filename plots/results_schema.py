"""Checks a benchmark results file ("schema": "pmpp-stencil-results/1") before anything is drawn.

Standard library only, so the benchmark can import it without matplotlib:

    from results_schema import ResultsError, load_results, validate
    doc = load_results("plots/results/h100.json")   # reads and validates, or raises ResultsError
    validate(doc)                                   # validates a dict already in memory

Every error names the field at fault, e.g. "runs[3].time_ms.median is missing" or
"no run of 02_basic_sweep solution at n=512 to compare against".

How: one description per kind of record (RUN, PROFILE, ALTERNATIVE, CONVERGENCE, the stage 07
records in HEAT, the whole file in RESULTS, the sweep's in SWEEP) names each field with its type,
its range and whether it may be absent or null; check() walks a document along its description.
validate() and validate_sweep() then apply the few rules across records (one per key, a baseline
at every n).

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
  null without tiles), at most one per (stage, bc, precision, fused_steps, n); and fused_run
  (date, commit, nvcc, driver), where `bench --only-08` measured that part after the rest. The
  section's own optional run (date, commit, nvcc, driver) is there where `bench --only-heat`
  measured the whole section (stages 07 and 08) after the rest.

- a record timed with --time-only (the quick bench's largest sizes) is not checked at its own N:
  check.checked (or, for the heat equation, checked) is false, and checked_at must name the
  sizes where the same program and options were checked; check.ok is that check's verdict;
- the optional "high_order" section (stage 10; absent in older files) holds runs, one record of
  the stage 10 program per (kernel, order, n), whose points and flops_per_point must be those of
  the star of its order (6R + 1 and 12R + 1), and alternatives, one per (name, order, n); and
  run (date, commit, nvcc, driver) where `bench --only-10` measured that part after the rest.

The sweep (`course.py bench --sweep`) has a file of its own, "schema": "pmpp-stencil-sweep/1",
in plots/results/sweep/: validate_sweep(doc) and load_sweep(path) check it the same way. Its
optional "heat" part (stages 07 and 08, absent in older files) holds one series per (stage, bc,
precision, fused_steps): the check's verdicts at a few N, a status (measured, failed, not
supported) and the --time-only points, one per N; stage 08's points carry their speed-up over
stage 07's point at the same N (same bc and precision), which must agree with the two rates; and
run (date, commit, nvcc, driver) where `bench --sweep --only-heat` measured that part later.
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


# --- the vocabulary of the descriptions ------------------------------------------------------
# A rule is a dict: its "kind", whether its field must be there ("required") and may be null
# ("nullable"), and the kind's own limits. An optional field may be absent or null; a nullable
# one must be there but may be null. check() below is the one function that reads them.

def _rule(kind, **limits):
    return {"kind": kind, "required": True, "nullable": False, **limits}


def optional(rule):
    return {**rule, "required": False}


def nullable(rule):
    return {**rule, "nullable": True}


def integer(minimum=None):
    return _rule("integer", minimum=minimum)


def number(minimum=None, above=None):
    return _rule("number", minimum=minimum, above=above)


def one_of(*choices):
    return _rule("choice", choices=choices)


def exactly(value):
    return _rule("exactly", value=value)


def list_of(items, nonempty=False, also=None):
    """A list whose every element follows `items` (None: any element). nonempty: True, or the
    words the message adds when the list is empty."""
    return _rule("list", items=items, nonempty=nonempty, also=also)


def record(fields, also=None):
    """An object: `fields` maps each key, in the order checked, to its rule. also(value, path) runs
    after the fields, for what involves several of them."""
    return _rule("record", fields=fields, also=also)


def when(condition, then, otherwise):
    """A field's rule that depends on the record holding it (on fields listed before it):
    `then` where condition(record) is true, else `otherwise`."""
    return {"kind": "when", "condition": condition, "then": then, "otherwise": otherwise}


def custom(test):
    """What test(value, path) accepts: it raises ResultsError for anything else, null included."""
    return _rule("any", also=test)


STRING, BOOLEAN, STAGE = _rule("string"), _rule("boolean"), _rule("stage")
ANYTHING = optional(_rule("any"))  # not checked: absent, null or any value
NUMBER, POSITIVE, NONNEGATIVE = number(), number(above=0), number(minimum=0)
SIZE = integer(3)

_TYPES = {  # kind: (the test, what the message expects)
    "string": (lambda v: isinstance(v, str), "a string"),
    "choice": (lambda v: isinstance(v, str), "a string"),
    "stage": (lambda v: isinstance(v, str), "a string"),
    "boolean": (lambda v: isinstance(v, bool), "true or false"),
    "integer": (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    "number": (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool), "a number"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "record": (lambda v: isinstance(v, dict), "an object"),
}


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


def check(value, rule, path):
    """Raises ResultsError naming the first part of `value` that breaks `rule`, as
    "<path> is <what it is>, expected <what the rule wants>"; `path` names value ("" at the top)."""
    if value is None and (rule["nullable"] or not rule["required"]):
        return
    kind = rule["kind"]
    if kind == "exactly" and value != rule["value"]:
        raise ResultsError(f"{path} is {value!r}, expected {rule['value']!r}")
    if kind in _TYPES and not _TYPES[kind][0](value):
        null = " or null" if kind == "record" and (rule["nullable"] or not rule["required"]) else ""
        raise ResultsError(f"{path} is {_kind(value)}, expected {_TYPES[kind][1]}{null}")
    low = rule.get("minimum")
    if kind == "number":
        if not math.isfinite(value):
            raise ResultsError(f"{path} is {value}, expected a finite number")
        if rule["above"] is not None and value <= rule["above"]:
            raise ResultsError(f"{path} is {value}, expected a number > {rule['above']}")
        if low is not None and value < low:
            raise ResultsError(f"{path} is {value}, expected a number >= {low}")
    elif kind == "integer" and low is not None and value < low:
        raise ResultsError(f"{path} is {value}, expected an integer >= {low}")
    elif kind == "choice" and value not in rule["choices"]:
        raise ResultsError(f"{path} is {value!r}, expected one of " + ", ".join(repr(c) for c in rule["choices"]))
    elif kind == "stage" and not STAGE_RE.match(value):
        raise ResultsError(f"{path} is {value!r}, expected a stage name like '02_basic_sweep'")
    elif kind == "list":
        if rule["nonempty"] and not value:
            words = rule["nonempty"]
            raise ResultsError(f"{path} is empty" + (f", {words}" if isinstance(words, str) else ""))
        for i, item in enumerate(value if rule["items"] is not None else ()):
            check(item, rule["items"], f"{path}[{i}]")
    elif kind == "record":
        for key, field in rule["fields"].items():
            while field["kind"] == "when":
                field = field["then"] if field["condition"](value) else field["otherwise"]
            where = f"{path}.{key}" if path else key
            if key not in value:
                if field["required"]:
                    raise ResultsError(f"{where} is missing")
                continue
            check(value[key], field, where)
    if rule.get("also"):
        rule["also"](value, path)


# --- what a rule's `also` checks beyond the fields one by one ---------------------------------

def _ordered(s, path):
    if not s["min"] <= s["median"] <= s["max"]:
        raise ResultsError(f"{path}: expected min <= median <= max, got {s['min']} / {s['median']} / {s['max']}")


def _rectangle(plane, path):
    """A picture of the middle plane: rows of numbers, all as long as the first. A failed run may
    hold null (not finite) cells; _pictures refuses them in a passing one."""
    for j, row in enumerate(plane):
        if not isinstance(row, list) or not row:
            raise ResultsError(f"{path}[{j}] is {'empty' if row == [] else _kind(row)}, expected a list of numbers")
        if len(row) != len(plane[0]):
            raise ResultsError(f"{path}[{j}] has {len(row)} values, expected {len(plane[0])} like plane[0]")
        for k, v in enumerate(row):
            check(v, nullable(NUMBER), f"{path}[{j}][{k}]")


def _pictures(r, path):
    """The pictures of one stage 07 record are of one shape; those of a passing one hold no null."""
    shots = r.get("snapshots") or []
    for i, shot in enumerate(shots):
        here, first = shot["plane"], shots[0]["plane"]
        if (len(here), len(here[0])) != (len(first), len(first[0])):
            raise ResultsError(f"{path}.snapshots[{i}].plane is {len(here)}×{len(here[0])}, expected "
                               f"{len(first)}×{len(first[0])} like {path}.snapshots[0].plane")
        for j, row in enumerate(here if r["check"]["ok"] else ()):
            for k, v in enumerate(row):
                if v is None:
                    raise ResultsError(f"{path}.snapshots[{i}].plane[{j}][{k}] is null, expected a number")


def _pair(point, path):
    if not isinstance(point, list) or len(point) != 2 or not all(
            v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in point):
        what = f"a list of {len(point)}" if isinstance(point, list) else _kind(point)
        raise ResultsError(f"{path} is {what}, expected a pair [iteration, residual] of numbers")


def _tile(tile, path):
    if not (isinstance(tile, list) and len(tile) == 2 and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in tile)):
        raise ResultsError(f"{path} is {tile!r}, expected null or [rows, columns] a block writes")


def _checked_or_not(c, path):
    if c["checked"] is False and c.get("ok") is not None:
        raise ResultsError(f"{path}.ok is given, but check.checked is false")


def passed(r):
    return r["check"]["ok"]


def unchecked(r):
    """A record timed with --time-only: not checked at its own N (check.checked or checked false)."""
    return (r.get("check") or {}).get("checked") is False or r.get("checked") is False


def _star_counts(r, path):
    R = r["order"]
    if R > 4:
        raise ResultsError(f"{path}.order is {R}, expected 1, 2, 3 or 4")
    for key, expected, formula in (("points", 6 * R + 1, "6·order + 1"), ("flops_per_point", 12 * R + 1, "12·order + 1")):
        if key in r and r[key] != expected:
            raise ResultsError(f"{path}.{key} is {r[key]}, expected {formula} = {expected} (order {R})")


# --- the descriptions: one per kind of record --------------------------------------------------

STATS = record({"median": POSITIVE, "min": POSITIVE, "max": POSITIVE, "reps": integer(1)}, also=_ordered)
# Where a --time-only record's program and options were checked: required when it is unchecked.
CHECKED_AT = when(unchecked, list_of(SIZE, nonempty="expected the sizes where the same program and options "
                                                    "were checked (a --time-only record)"),
                  optional(list_of(SIZE)))


def _not_checked_here(c):
    return c.get("checked") is False


# A one-sweep run's check: its verdict, or with check.checked false (--time-only) the verdict at
# the sizes in checked_at, without numbers of its own.
SWEEP_CHECK = record({"ok": BOOLEAN, "checked": optional(BOOLEAN),
                      "max_rel_err": when(_not_checked_here, ANYTHING, nullable(NONNEGATIVE)),
                      **{k: optional(integer(0)) for k in ("wrong", "unwritten", "boundary_modified")},
                      **{k: optional(BOOLEAN) for k in ("guard_violated", "input_modified")}})
RESOURCES = record({**{k: optional(integer(0)) for k in ("threads_per_block", "shared_bytes", "registers",
                                                          "blocks_per_sm")},
                    "occupancy": optional(NONNEGATIVE)})
IMPLEMENTATION = one_of(*IMPLEMENTATIONS)

RUN = record({
    "device": STRING, "stage": STAGE, "title": STRING, "figure": STRING, "implementation": IMPLEMENTATION,
    "n": SIZE,
    "check": SWEEP_CHECK, "checked_at": CHECKED_AT,
    "tile": optional(record({k: optional(integer(0)) for k in ("in_tile_dim", "out_tile_dim", "z_coarsening")})),
    "model": record({"opb": POSITIVE, "formula": STRING}),
    "resources": optional(RESOURCES),
    # The compute roof, derived from the device; fp32_gflops null where the architecture is unknown.
    "device_peak": optional(record({"sm_count": integer(1), "clock_mhz": POSITIVE, "fp32_lanes_per_sm": integer(0),
                                    "fp32_gflops": nullable(POSITIVE)})),
    # A passing run is plotted: everything the figures read must be there. A failed run is never
    # plotted; what it carries must still be well formed.
    **{k: when(passed, STATS, optional(STATS)) for k in TIMING_STATS},
    **{k: when(passed, POSITIVE, optional(NUMBER)) for k in RATES},
})

PROFILE = record({
    "stage": STAGE, "implementation": IMPLEMENTATION, "n": SIZE,
    # A counter Nsight Compute could not read is null; the figures leave it out.
    **{k: nullable(NONNEGATIVE) for k in ("flops", "global_load_bytes", "dram_read_bytes", "dram_write_bytes")},
    **{k: nullable(POSITIVE) for k in ("opb_global", "opb_dram")},
})

ALTERNATIVE_CHECK = record({"ok": BOOLEAN, "checked": optional(BOOLEAN), "max_rel_err": optional(NONNEGATIVE)})
ALTERNATIVE = record({
    "name": STRING, "n": SIZE, "check": ALTERNATIVE_CHECK, "checked_at": CHECKED_AT,
    "time_ms": when(passed, STATS, ANYTHING),  # a failed one is never plotted
    **{k: when(passed, POSITIVE, ANYTHING) for k in ("gbps", "fraction_of_copy")},
})

_DERIVATIVE, _CONVERGENCE_PRECISION = one_of("first", "second"), one_of("double", "float")
CONVERGENCE = record({
    "stage": optional(STRING), "kind": optional(STRING), "device": optional(STRING),
    "rows": list_of(record({"derivative": _DERIVATIVE, "points": integer(2), "order": optional(integer(1)),
                            "precision": _CONVERGENCE_PRECISION, "h": POSITIVE,
                            "error": nullable(NONNEGATIVE)}),  # null: not finite (not drawn)
                    nonempty=True),
    "measured_order": optional(list_of(record({"derivative": _DERIVATIVE, "points": integer(2),
                                               "precision": _CONVERGENCE_PRECISION, "slope": nullable(NUMBER)}))),
    "book_example": optional(record({})),
})


def _looped(r):
    return r["steps"] > 0


def _heat_fields(timed):
    """One record of the stage 07 program. timed: one that passed its check must carry its timings
    (the timed runs); --check-only records (accuracy, snapshots) may carry none."""
    def plotted(r):
        return timed and r["check"]["ok"]
    return {
        "device": STRING, "stage": STAGE, "title": optional(STRING), "implementation": IMPLEMENTATION, "n": SIZE,
        "bc": one_of(*BOUNDARIES), "precision": one_of(*PRECISIONS),
        "bytes_per_cell": optional(integer(1)), "cells_per_thread": optional(integer(1)), "steps": integer(0),
        **{k: POSITIVE for k in ("dt", "r", "h", "alpha")}, "t_end": NONNEGATIVE,
        "check": record({"ok": BOOLEAN,  # false also when Neumann or periodic boundaries lost heat
                         "checked": optional(BOOLEAN),
                         "steps_checked": integer(0), "max_err": nullable(NONNEGATIVE), "tolerance": NONNEGATIVE,
                         **{k: optional(integer(0)) for k in ("wrong", "unwritten", "ghosts_wrong")}}),
        # --time-only: no reference and no analytic run at this N; checked_at names where they ran
        "checked": optional(BOOLEAN), "checked_at": CHECKED_AT,
        # null: Dirichlet boundaries do not conserve heat
        "conservation": nullable(record({"drift": nullable(NONNEGATIVE), "tolerance": NONNEGATIVE, "ok": BOOLEAN})),
        "analytic_error": when(lambda r: passed(r) and not unchecked(r), NONNEGATIVE, nullable(NONNEGATIVE)),
        "growth": optional(list_of(None)),
        "resources": optional(RESOURCES),
        "snapshots": optional(list_of(SNAPSHOT)),
        **{k: when(plotted, STATS, optional(STATS)) for k in HEAT_TIMING},
        # the loop and its CUDA graph only when the record ran steps
        **{k: when(_looped, when(plotted, STATS, optional(STATS)), ANYTHING) for k in LOOP_TIMING},
        **{k: when(plotted, POSITIVE, optional(NUMBER)) for k in HEAT_RATES},
        **{k: when(plotted, when(_looped, POSITIVE, optional(POSITIVE)), optional(NUMBER)) for k in LOOP_RATES},
    }


SNAPSHOT = record({"step": integer(0), "t": NONNEGATIVE, "plane": list_of(None, nonempty=True, also=_rectangle)})
JACOBI = record({
    "mode": one_of("jacobi"), "stage": STAGE, "n": SIZE, "precision": one_of(*PRECISIONS), "tol": POSITIVE,
    "iterations": integer(0), "predicted_iterations": NONNEGATIVE, "converged": BOOLEAN, "stalled": BOOLEAN,
    # null: not finite, which a converged run cannot be
    **{k: when(lambda r: r["converged"], NONNEGATIVE, nullable(NONNEGATIVE)) for k in ("residual", "error")},
    "time_ms": NONNEGATIVE,
    "history": optional(list_of(custom(_pair))),  # not drawn: its shape only
})
HEAT = record({
    "runs": list_of(record(_heat_fields(timed=True), also=_pictures)),
    "overhead": list_of(record(_heat_fields(timed=True), also=_pictures)),
    "accuracy": list_of(record(_heat_fields(timed=False), also=_pictures)),
    "snapshots": nullable(record({**_heat_fields(timed=False),  # null: no pictures were taken
                                  "snapshots": list_of(SNAPSHOT, nonempty="expected the pictures")},
                                 also=_pictures)),
    "jacobi": list_of(JACOBI),
    # Stage 08 against stage 07 (absent in older files); fused_run when `bench --only-08` measured it later.
    "fused": optional(list_of(record({**_heat_fields(timed=True), "fused_steps": integer(1),
                                      "tile": optional(custom(_tile)),
                                      "model_bytes_per_update": optional(POSITIVE)}, also=_pictures))),
    "fused_run": optional(record({k: STRING for k in ("date", "commit", "nvcc", "driver")})),
    # the section's own run when `bench --only-heat` measured it (stages 07 and 08) after the rest
    "run": optional(record({k: STRING for k in ("date", "commit", "nvcc", "driver")})),
})

# Stage 10: the star stencil of order R, three kernels (harness/sweep/order_main.cu's records).
KERNELS = ("basic", "tiled", "fast")
HIGH_ORDER_RUN = record({
    "device": STRING, "stage": STAGE, "title": optional(STRING), "implementation": IMPLEMENTATION, "n": SIZE,
    "order": integer(1), "points": integer(7), "kernel": one_of(*KERNELS), "flops_per_point": integer(13),
    "check": SWEEP_CHECK, "checked_at": CHECKED_AT,
    "model": record({"opb": POSITIVE, "formula": STRING}),
    "resources": optional(RESOURCES),
    **{k: when(passed, STATS, optional(STATS)) for k in TIMING_STATS},
    **{k: when(passed, POSITIVE, optional(NUMBER)) for k in RATES},
    "vs_basic": optional(POSITIVE),  # the basic kernel's time / this one's, in the same run
}, also=_star_counts)
HIGH_ORDER_ALTERNATIVE = record({
    "name": STRING, "order": integer(1), "n": SIZE, "check": ALTERNATIVE_CHECK, "checked_at": CHECKED_AT,
    "time_ms": when(passed, STATS, ANYTHING),
    **{k: when(passed, POSITIVE, ANYTHING) for k in ("gbps", "fraction_of_copy")},
}, also=_star_counts)
HIGH_ORDER = record({
    "runs": list_of(HIGH_ORDER_RUN, nonempty="expected stage 10's runs"),
    "alternatives": optional(list_of(HIGH_ORDER_ALTERNATIVE)),
    "sizes": optional(list_of(SIZE)),
    "run": optional(record({k: STRING for k in ("date", "commit", "nvcc", "driver")})),  # `bench --only-10`
})

RESULTS = record({
    "schema": exactly(SCHEMA), "gpu": STRING, "date": STRING, "commit": STRING,
    "nvcc": optional(STRING), "driver": optional(STRING),
    "sizes": list_of(SIZE),
    "runs": list_of(RUN),
    "profiles": optional(list_of(PROFILE)), "profile_note": optional(STRING),
    "convergence": optional(CONVERGENCE),
    "heat": optional(HEAT),
    "alternatives": optional(list_of(ALTERNATIVE)),
    "high_order": optional(HIGH_ORDER),  # stage 10 (absent in older files)
    "plan": optional(record({"mode": one_of("quick", "full"), "estimated_s": optional(NONNEGATIVE),
                             "elapsed_s": optional(NONNEGATIVE)})),
})

# The sweep's optional part for the time-stepping stages: one series per (stage, bc, precision,
# fused_steps), first checked at a few N (--check-only; the verdicts in "check"), then timed at
# every N of "sizes" with --time-only (the points). status: "measured"; "failed" (its check, or the
# timing, exited 1: not plotted, no points); "not supported" (the program refused the options with
# exit 2, e.g. a stage built before it ran those boundaries: no check, no points; "note" says why).
SWEEP_STATUSES = ("measured", "failed", "not supported")
SWEEP_HEAT_POINT = record({
    "n": SIZE, **{k: STATS for k in HEAT_TIMING}, "loop_ms": optional(STATS),
    **{k: POSITIVE for k in HEAT_RATES},
    # stage 08: its updates_per_s / stage 07's (same bc and precision, same N, this run); null
    # where stage 07 has no point there
    "speedup_over_07": optional(nullable(POSITIVE)),
})
SWEEP_HEAT_SERIES = record({
    "stage": STAGE, "bc": one_of(*BOUNDARIES), "precision": one_of(*PRECISIONS), "fused_steps": integer(1),
    "steps": integer(1), "status": one_of(*SWEEP_STATUSES), "note": optional(STRING),
    "check": list_of(record({"n": SIZE, "ok": BOOLEAN, "max_err": nullable(NONNEGATIVE)})),
    "points": list_of(SWEEP_HEAT_POINT),
})
SWEEP_HEAT = record({
    "sizes": list_of(SIZE, nonempty="expected the sizes timed"), "reps": integer(1),
    "series": list_of(SWEEP_HEAT_SERIES),
    # where `bench --sweep --only-heat` measured this part after the rest: its own run
    "run": optional(record({k: STRING for k in ("date", "commit", "nvcc", "driver")})),
})

# Stage 10's fast kernel at every order and N (sweep.measure_high_order): checked at checked_at
# first (every order), then timed with --time-only.
SWEEP_HIGH_ORDER = record({
    "sizes": list_of(SIZE, nonempty="expected the sizes timed"), "reps": integer(1),
    "checked_at": list_of(SIZE),
    "points": list_of(record({
        "order": integer(1), "n": SIZE, "planes_per_chunk": integer(1),
        **{k: STATS for k in TIMING_STATS}, **{k: POSITIVE for k in RATES},
    }), nonempty="expected stage 10's points"),
    "note": optional(STRING),  # where the part came from, when not from bench
    "run": optional(record({**{k: STRING for k in ("date", "commit")},
                            **{k: optional(STRING) for k in ("nvcc", "driver")}})),
})

# The sweep: each point a timed run of one stage at one N (the harness's --time-only record) that
# says whether that N was also checked against the CPU reference (check.checked) and passed (ok).
SWEEP = record({
    "schema": exactly(SWEEP_SCHEMA), "gpu": STRING, "date": STRING, "commit": STRING,
    "nvcc": optional(STRING), "driver": optional(STRING), "checked_up_to": integer(0),
    "points": list_of(record({
        "stage": STAGE, "implementation": IMPLEMENTATION, "n": SIZE,
        "check": record({"checked": BOOLEAN, "ok": when(lambda c: c["checked"], BOOLEAN, optional(BOOLEAN))},
                        also=_checked_or_not),
        **{k: STATS for k in TIMING_STATS}, **{k: POSITIVE for k in RATES},
    }), nonempty=True),
    "heat": optional(SWEEP_HEAT),  # stages 07 and 08 (absent in older files and with --no-heat)
    "high_order": optional(SWEEP_HIGH_ORDER),  # stage 10 (absent in older files and with --no-high-order)
})


# --- the rules across records ------------------------------------------------------------------

def _document(doc, rule):
    if not isinstance(doc, dict):
        raise ResultsError(f"the file holds {_kind(doc)}, expected one JSON object")
    check(doc, rule, "")


def _unique(records, where, fields, show=str):
    """At most one record per combination of `fields` (the last one being n) in the list `where`."""
    seen = {}
    for i, r in enumerate(records):
        key = tuple(r[k] for k in fields)
        if key in seen:
            what = "".join(f"{show(v)} " for v in key[:-1])
            raise ResultsError(f"{where}[{i}] repeats {what}at n={key[-1]} (first in {where}[{seen[key]}])")
        seen[key] = i


def _loops(records, where, expected):
    for i, r in enumerate(records):
        if r["steps"] < 1:
            raise ResultsError(f"{where}[{i}].steps is 0, expected {expected}")


def validate(doc):
    """Raises ResultsError naming the first bad field; returns None when `doc` can be plotted."""
    _document(doc, RESULTS)
    runs = doc["runs"]
    _unique(runs, "runs", ("stage", "implementation", "n"))
    _unique(doc.get("alternatives") or [], "alternatives", ("name", "n"), show=repr)
    heat = doc.get("heat")
    if heat is not None:
        for part, fields in (("runs", ("bc", "precision", "n")), ("overhead", ("n",)),
                             ("accuracy", ("bc", "precision", "n")), ("jacobi", ("precision", "n")),
                             ("fused", ("stage", "bc", "precision", "fused_steps", "n"))):
            _unique(heat.get(part) or [], f"heat.{part}", fields)
        _loops(heat["overhead"], "heat.overhead", "a loop of at least 1 step")
        _loops(heat.get("fused") or [], "heat.fused", "a loop of steps")
    high = doc.get("high_order")
    if high is not None:
        _unique(high["runs"], "high_order.runs", ("kernel", "order", "n"))
        _unique(high.get("alternatives") or [], "high_order.alternatives", ("name", "order", "n"), show=repr)

    # Every speed-up is time(baseline) / time(stage) at the same n, from this file.
    timed_ns = {}  # n -> the first passing run or alternative there, which needs a baseline
    for part in ("runs", "alternatives"):
        for i, r in enumerate(doc.get(part) or []):
            if r["check"]["ok"]:
                timed_ns.setdefault(r["n"], f"{part}[{i}]")
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


def validate_sweep(doc):
    """Raises ResultsError naming the first bad field of a sweep file; None when it can be plotted."""
    _document(doc, SWEEP)
    _unique(doc["points"], "points", ("stage", "implementation", "n"))
    for i, r in enumerate(doc["points"]):
        checked = r["check"]["checked"]
        if checked != (r["n"] <= doc["checked_up_to"]):
            raise ResultsError(f"points[{i}].check.checked is {str(checked).lower()}, but checked_up_to is "
                               f"{doc['checked_up_to']} and n is {r['n']}")
    if doc.get("heat") is not None:
        _sweep_heat(doc["heat"])
    if doc.get("high_order") is not None:
        _unique(doc["high_order"]["points"], "high_order.points", ("order", "n"))


def _sweep_heat(heat):
    """The rules across the records of a sweep's "heat" part: one series per key, one point per N,
    a status that agrees with its check and points, stage 08's speed-ups from stage 07's points."""
    series = heat["series"]
    seen = {}
    for i, s in enumerate(series):
        where = f"heat.series[{i}]"
        key = (s["stage"], s["bc"], s["precision"], s["fused_steps"])
        if key in seen:
            raise ResultsError(f"{where} repeats stage {key[0]} {key[1]} {key[2]} fused_steps {key[3]} "
                               f"(first in heat.series[{seen[key]}])")
        seen[key] = i
        _unique(s["points"], f"{where}.points", ("n",))
        _unique(s["check"], f"{where}.check", ("n",))
        if s["status"] == "measured":
            if not s["points"]:
                raise ResultsError(f"{where}.points is empty, but status is 'measured'")
            if not s["check"]:
                raise ResultsError(f"{where}.check is empty, but status is 'measured' (checked first, then timed)")
            bad = [j for j, c in enumerate(s["check"]) if not c["ok"]]
            if bad:
                raise ResultsError(f"{where}.check[{bad[0]}].ok is false, but status is 'measured'")
        elif s["points"]:
            raise ResultsError(f"{where}.points is not empty, but status is {s['status']!r} (never plotted)")
        elif s["status"] == "not supported" and s["check"]:
            raise ResultsError(f"{where}.check is not empty, but status is 'not supported'")
    for i, s in enumerate(series):
        base_i = seen.get(("07_heat_equation", s["bc"], s["precision"], 1))
        base = {} if base_i is None else {p["n"]: p for p in series[base_i]["points"]}
        for j, p in enumerate(s["points"]):
            where = f"heat.series[{i}].points[{j}].speedup_over_07"
            got = p.get("speedup_over_07")
            if s["stage"] == "07_heat_equation" or s["fused_steps"] == 1:
                continue
            expected = p["updates_per_s"] / base[p["n"]]["updates_per_s"] if p["n"] in base else None
            if expected is None and got is not None:
                raise ResultsError(f"{where} is {got}, but stage 07 ({s['bc']}, {s['precision']}) has no point at "
                                   f"n={p['n']} to compare against")
            if expected is not None and (got is None or abs(got - expected) > 1e-3 * expected):
                raise ResultsError(f"{where} is {'missing' if got is None else got}, expected "
                                   f"{expected:.4g} (updates_per_s over stage 07's at the same n)")


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
