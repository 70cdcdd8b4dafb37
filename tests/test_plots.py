#!/usr/bin/env python3
"""Tests for plots/plot.py and plots/results_schema.py (no GPU needed).

    python3 tests/test_plots.py [data | figures | heat-figures ...]   (no group: all of them)

Exit status 0: all passed; 1: a test failed; 2: no such group; 77: matplotlib is missing for a
group that draws (SKIP; groups named before it still ran, and a failure there is still a failure).

What is tested:
- the schema validator accepts tests/fixtures/results_small.json and rejects each kind of
  malformed file with a message that names the bad field;
- plot.py exits 2 with one line "plot.py: <file>: <what is wrong>" for a missing, empty, invalid
  or malformed results file;
- the fixture draws all five figures and the three of stage 07 (the heat equation), each a real
  PNG of a reasonable size;
- without convergence data it draws four and says why; without profiles opb.png is still drawn;
- a malformed "heat" section is rejected naming the field; a file without one draws the old
  figures and no heat figures, and removes stale ones; a failed heat run is noted, not plotted;
- the stage 07 benchmark (plots/heat_bench.py) runs the program with the right options, records
  a run that exits 1, stops on any other failure, and its section validates (a fake program);
- every results file shipped in plots/results/ validates.
"""
import contextlib
import copy
import importlib.util
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLOTS = ROOT / "plots"
PLOT = PLOTS / "plot.py"
FIXTURE = ROOT / "tests" / "fixtures" / "results_small.json"
FIGURES = ["speedup.png", "bandwidth.png", "opb.png", "roofline.png", "convergence.png"]
HEAT_FIGURES = ["heat_maps.png", "heat_accuracy.png", "heat_rates.png", "temporal_blocking.png"]
HIGH_ORDER_FIGURES = ["high_order.png"]  # stage 10, from the fixture's high_order section

sys.path.insert(0, str(PLOTS))
from results_schema import (BOUNDARIES, HEAT_RATES, HEAT_TIMING, LOOP_RATES, LOOP_TIMING, PRECISIONS,  # noqa: E402
                            ResultsError, load_results, load_sweep, validate, validate_sweep)

SWEEP_FIXTURE = ROOT / "tests" / "fixtures" / "sweep_small.json"

HEAT_TIMED = HEAT_TIMING + LOOP_TIMING + HEAT_RATES + LOOP_RATES  # what a stage 07 run carries once timed

failures = []


def test(fn):
    """Runs fn now and records the outcome."""
    try:
        fn()
        print(f"ok    {fn.__name__}")
    except Exception as e:  # noqa: BLE001 - a test runner reports every failure
        failures.append(fn.__name__)
        print(f"FAIL  {fn.__name__}: {e}")
        if not isinstance(e, AssertionError):
            traceback.print_exc()
    return fn


def fixture():
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def timed_run_index(doc, stage, impl="solution", n=512):
    for i, r in enumerate(doc["runs"]):
        if r["stage"] == stage and r["implementation"] == impl and r["n"] == n:
            return i
    raise AssertionError(f"fixture has no {stage} {impl} at n={n}")


def fail_heat_run(r, **check):
    """r as the stage 07 program writes a run that failed its check: without timings."""
    r["check"].update(ok=False, **check)
    for k in HEAT_TIMED:
        r.pop(k, None)
    return r


def heat_index(doc, part, precision="float", n=512, bc="dirichlet"):
    for i, r in enumerate(doc["heat"][part]):
        if r["bc"] == bc and r["precision"] == precision and r["n"] == n:
            return i
    raise AssertionError(f"fixture has no heat.{part} {bc} {precision} at n={n}")


# --- malformed documents: (name, mutation, words the message must contain) --------------------

def _drop_time(d):
    i = timed_run_index(d, "04_thread_coarsening")
    del d["runs"][i]["time_ms"]
    return f"runs[{i}].time_ms is missing"


def _text_median(d):
    i = timed_run_index(d, "03_shared_tiling", n=256)
    d["runs"][i]["time_ms"]["median"] = "fast"
    return f"runs[{i}].time_ms.median is the string 'fast', expected a number"


def _nan_median(d):
    i = timed_run_index(d, "03_shared_tiling", n=256)
    d["runs"][i]["time_ms"]["median"] = math.nan
    return f"runs[{i}].time_ms.median is nan, expected a finite number"


def _bool_gflops(d):
    i = timed_run_index(d, "05_register_tiling")
    d["runs"][i]["gflops"] = True
    return f"runs[{i}].gflops is a boolean, expected a number"


def _no_baseline(d):
    d["runs"] = [r for r in d["runs"] if r["stage"] != "02_basic_sweep"]
    return "no run of 02_basic_sweep solution to compare against"


def _no_baseline_at_512(d):
    i = timed_run_index(d, "02_basic_sweep", n=512)
    del d["runs"][i]
    return "no passing run of 02_basic_sweep solution at n=512 to compare"


def _failed_baseline(d):
    for r in d["runs"]:
        if r["stage"] == "02_basic_sweep":
            r["check"]["ok"] = False
    return "failed its check"


def _wrong_schema(d):
    d["schema"] = "x"
    return "schema is 'x', expected 'pmpp-stencil-results/1'"


def _no_schema(d):
    del d["schema"]
    return "schema is missing"


def _duplicate_run(d):
    i = timed_run_index(d, "06_roofline", n=256)
    d["runs"].append(copy.deepcopy(d["runs"][i]))
    return f"repeats 06_roofline solution at n=256 (first in runs[{i}])"


def _bad_implementation(d):
    d["runs"][0]["implementation"] = "mine"
    return "runs[0].implementation is 'mine', expected one of 'solution', 'exercise'"


def _bad_stage_name(d):
    d["runs"][1]["stage"] = "shared_tiling"
    return "runs[1].stage is 'shared_tiling', expected a stage name"


def _runs_not_list(d):
    d["runs"] = {}
    return "runs is an object, expected a list"


def _profile_text(d):
    d["profiles"][2]["opb_dram"] = "1.6"
    return "profiles[2].opb_dram is the string '1.6', expected a number"


def _convergence_bad_row(d):
    d["convergence"]["rows"][5]["precision"] = "half"
    return "convergence.rows[5].precision is 'half'"


def _alternative_without_time(d):
    del d["alternatives"][1]["time_ms"]
    return "alternatives[1].time_ms is missing"


def _duplicate_alternative(d):
    d["alternatives"].append(copy.deepcopy(d["alternatives"][0]))
    return "alternatives[2] repeats 'torch conv3d' at n=512 (first in alternatives[0])"


def _min_above_median(d):
    i = timed_run_index(d, "02_basic_sweep", n=128)
    d["runs"][i]["copy_ms"]["min"] = 1.0
    return f"runs[{i}].copy_ms: expected min <= median <= max"


# --- malformed heat sections (stage 07) --------------------------------------------------------

def _heat_drop_rate(d):
    i = heat_index(d, "runs", "half")
    del d["heat"]["runs"][i]["updates_per_s"]
    return f"heat.runs[{i}].updates_per_s is missing"


def _heat_bad_bc(d):
    i = heat_index(d, "runs", "double", bc="neumann")
    d["heat"]["runs"][i]["bc"] = "robin"
    return f"heat.runs[{i}].bc is 'robin', expected one of 'dirichlet', 'neumann', 'periodic'"


def _heat_bad_precision(d):
    i = heat_index(d, "accuracy", "half", n=32)
    d["heat"]["accuracy"][i]["precision"] = "fp8"
    return f"heat.accuracy[{i}].precision is 'fp8', expected one of 'float', 'double', 'half', 'bf16'"


def _heat_text_error(d):
    i = heat_index(d, "accuracy", "double", n=64)
    d["heat"]["accuracy"][i]["analytic_error"] = "small"
    return f"heat.accuracy[{i}].analytic_error is the string 'small', expected a number"


def _heat_negative_error(d):
    d["heat"]["accuracy"][0]["analytic_error"] = -1e-3
    return "heat.accuracy[0].analytic_error is -0.001, expected a number >= 0"


def _heat_no_h(d):
    del d["heat"]["accuracy"][3]["h"]
    return "heat.accuracy[3].h is missing"


def _heat_no_graph(d):
    del d["heat"]["overhead"][1]["graph_us_per_step"]
    return "heat.overhead[1].graph_us_per_step is missing"


def _heat_no_loop(d):
    d["heat"]["overhead"][0]["steps"] = 0
    return "heat.overhead[0].steps is 0, expected a loop of at least 1 step"


def _heat_step_stats(d):
    i = heat_index(d, "runs", "bf16", bc="periodic")
    d["heat"]["runs"][i]["step_ms"]["max"] = 0.0001
    return f"heat.runs[{i}].step_ms: expected min <= median <= max"


def _heat_duplicate_run(d):
    i = heat_index(d, "runs", "float")
    d["heat"]["runs"].append(copy.deepcopy(d["heat"]["runs"][i]))
    return f"heat.runs[{len(d['heat']['runs']) - 1}] repeats dirichlet float at n=512 (first in heat.runs[{i}])"


def _heat_duplicate_overhead(d):
    d["heat"]["overhead"].append(copy.deepcopy(d["heat"]["overhead"][0]))
    return "heat.overhead[2] repeats at n=32 (first in heat.overhead[0])"


def _heat_ragged_plane(d):
    d["heat"]["snapshots"]["snapshots"][1]["plane"][2].pop()
    return "heat.snapshots.snapshots[1].plane[2] has 3 values, expected 4 like plane[0]"


def _heat_nan_in_plane(d):
    d["heat"]["snapshots"]["snapshots"][0]["plane"][1][2] = math.nan
    return "heat.snapshots.snapshots[0].plane[1][2] is nan, expected a finite number"


def _heat_text_in_plane(d):
    d["heat"]["snapshots"]["snapshots"][2]["plane"][3][0] = "hot"
    return "heat.snapshots.snapshots[2].plane[3][0] is the string 'hot', expected a number"


def _heat_plane_shapes(d):
    d["heat"]["snapshots"]["snapshots"][2]["plane"].pop()
    return "heat.snapshots.snapshots[2].plane is 3×4, expected 4×4 like heat.snapshots.snapshots[0].plane"


def _heat_no_pictures(d):
    d["heat"]["snapshots"]["snapshots"] = []
    return "heat.snapshots.snapshots is empty, expected the pictures"


def _heat_snapshot_time(d):
    del d["heat"]["snapshots"]["snapshots"][1]["t"]
    return "heat.snapshots.snapshots[1].t is missing"


def _heat_jacobi_iterations(d):
    d["heat"]["jacobi"][0]["iterations"] = "2560"
    return "heat.jacobi[0].iterations is the string '2560', expected an integer"


def _heat_jacobi_converged_without_error(d):
    d["heat"]["jacobi"][1]["error"] = None
    return "heat.jacobi[1].error is null, expected a number"


def _heat_jacobi_history(d):
    d["heat"]["jacobi"][1]["history"][2] = [4096]
    return "heat.jacobi[1].history[2] is a list of 1, expected a pair [iteration, residual]"


def _heat_no_accuracy(d):
    del d["heat"]["accuracy"]
    return "heat.accuracy is missing"


def _heat_not_object(d):
    d["heat"] = []
    return "heat is a list, expected an object or null"


def _heat_conservation(d):
    i = heat_index(d, "runs", "float", bc="periodic")
    d["heat"]["runs"][i]["conservation"]["ok"] = "yes"
    return f"heat.runs[{i}].conservation.ok is the string 'yes', expected true or false"


def _fused_zero_steps_per_pass(d):
    d["heat"]["fused"][3]["fused_steps"] = 0
    return "heat.fused[3].fused_steps is 0, expected an integer >= 1"


def _fused_bad_tile(d):
    d["heat"]["fused"][4]["tile"] = [28]
    return "heat.fused[4].tile is [28], expected null or [rows, columns] a block writes"


def _fused_duplicate(d):
    d["heat"]["fused"].append(copy.deepcopy(d["heat"]["fused"][2]))
    return "heat.fused[14] repeats 08_temporal_blocking dirichlet float 2 at n=256 (first in heat.fused[2])"


def _fused_negative_model(d):
    d["heat"]["fused"][3]["model_bytes_per_update"] = -1
    return "heat.fused[3].model_bytes_per_update is -1, expected a number > 0"


def _fused_run_bad_commit(d):
    d["heat"]["fused_run"] = {"date": "2026-11-23T19:00:00Z", "commit": 5, "nvcc": "13.0.88", "driver": "580"}
    return "heat.fused_run.commit is"


def _fused_without_loop(d):
    del d["heat"]["fused"][7]["loop_ms"]
    return "heat.fused[7].loop_ms is missing"


HEAT_MUTATIONS = [_fused_run_bad_commit, _fused_zero_steps_per_pass, _fused_bad_tile, _fused_duplicate, _fused_without_loop,
                  _fused_negative_model,
                  _heat_drop_rate, _heat_bad_bc, _heat_bad_precision, _heat_text_error, _heat_negative_error,
                  _heat_no_h, _heat_no_graph, _heat_no_loop, _heat_step_stats, _heat_duplicate_run,
                  _heat_duplicate_overhead, _heat_ragged_plane, _heat_nan_in_plane, _heat_text_in_plane,
                  _heat_plane_shapes, _heat_no_pictures, _heat_snapshot_time, _heat_jacobi_iterations,
                  _heat_jacobi_converged_without_error, _heat_jacobi_history, _heat_no_accuracy, _heat_not_object,
                  _heat_conservation]

MUTATIONS = [_drop_time, _text_median, _nan_median, _bool_gflops, _no_baseline, _no_baseline_at_512,
             _failed_baseline, _wrong_schema, _no_schema, _duplicate_run, _bad_implementation,
             _bad_stage_name, _runs_not_list, _profile_text, _convergence_bad_row,
             _alternative_without_time, _duplicate_alternative, _min_above_median]


def rejects(doc, expected):
    try:
        validate(doc)
    except ResultsError as e:
        assert expected in str(e), f"message {str(e)!r} does not contain {expected!r}"
        return str(e)
    raise AssertionError(f"validate() accepted a document that should fail with {expected!r}")


# --- PNG checks -------------------------------------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """(width, height) from the IHDR chunk, which must come first."""
    head = path.read_bytes()[:33]
    assert head[:8] == PNG_SIGNATURE, f"{path.name} does not start with the PNG signature"
    length, kind = struct.unpack(">I4s", head[8:16])
    assert kind == b"IHDR" and length == 13, f"{path.name}: first chunk is {kind!r}, expected IHDR"
    return struct.unpack(">II", head[16:24])


def check_png(path):
    assert path.is_file(), f"{path} was not written"
    size = path.stat().st_size
    assert size > 10_000, f"{path.name} is only {size} bytes"
    w, h = png_size(path)
    assert w >= 600 and h >= 400, f"{path.name} is {w}×{h}, expected at least 600×400"


def run_plot(results, out):
    return subprocess.run([sys.executable, str(PLOT), str(results), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)


def expect_exit_2(results, out, expected):
    p = run_plot(results, out)
    assert p.returncode == 2, (f"exit status {p.returncode}, expected 2\nstdout: {p.stdout}\n"
                               f"stderr: {p.stderr}")
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{p.stderr}"
    prefix = f"plot.py: {results}: "
    assert lines[0].startswith(prefix), f"{lines[0]!r} does not start with {prefix!r}"
    assert expected in lines[0], f"{lines[0]!r} does not contain {expected!r}"
    assert not list(Path(out).glob("*.png")), "a figure was written for a bad file"


# --- a stand-in for stage 07's program, for the benchmark's tests ------------------------------

FAKE_HEAT = """#!{python}
# Writes fixture records shaped by its options, as build/stage_07_heat_equation_solution would.
import json, sys
args = sys.argv[1:]
with open({calls!r}, "a") as log:
    log.write(json.dumps(args) + "\\n")
opt = lambda name, default=None: args[args.index(name) + 1] if name in args else default
heat = json.load(open({fixture!r}))["heat"]
if "--jacobi" in args:
    if {crash!r} == "jacobi":
        print("out of memory"); sys.exit(3)
    records = [dict(heat["jacobi"][0], n=int(n)) for n in opt("--n").split(",")]
else:
    template = heat["snapshots"] if "--snapshots" in args else heat["runs"][2]
    records = []
    for n in opt("--n").split(","):
        r = dict(template, n=int(n), bc=opt("--bc", "dirichlet"), precision=opt("--precision", "float"))
        failed = (r["bc"], r["precision"]) == ("periodic", "bf16")
        if "--check-only" in args or failed:
            r = {{k: v for k, v in r.items() if k not in {timed!r}}}
        if failed:
            r["check"] = dict(r["check"], ok=False, wrong=3)
        records.append(r)
with open(opt("--json"), "a") as out:
    for r in records:
        out.write(json.dumps(r) + "\\n")
print("report")
sys.exit(1 if any(not r.get("check", {{"ok": r.get("converged")}})["ok"] for r in records) else 0)
"""


def fake_heat_program(folder, crash=None):
    """A stage 07 program that logs its arguments to folder/calls.jsonl; crash="jacobi" makes
    --jacobi exit 3 (as when the GPU is out of memory)."""
    path = folder / "stage_07_heat_equation_solution"
    path.write_text(FAKE_HEAT.format(python=sys.executable, calls=str(folder / "calls.jsonl"),
                                     fixture=str(FIXTURE), crash=crash, timed=list(HEAT_TIMED)))
    os.chmod(path, 0o755)
    return path


def quietly(fn, *args):
    """fn(*args) with stdout captured: (result, what it printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(*args)
    return result, out.getvalue()


@contextlib.contextmanager
def patched(module, **names):
    """module's attributes set to the given values for the block, and put back after it."""
    saved = {name: getattr(module, name) for name in names}
    try:
        for name, value in names.items():
            setattr(module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)


# --- the tests --------------------------------------------------------------------------------

def schema_tests():
    @test
    def fixture_is_valid():
        validate(fixture())
        doc = load_results(FIXTURE)
        assert doc["gpu"].startswith("FIXTURE"), "the fixture must say it is not a measurement"

    @test
    def fixture_is_realistic():
        doc = fixture()
        assert doc["sizes"] == [128, 256, 512]
        stages = sorted({r["stage"] for r in doc["runs"]})
        assert stages == ["02_basic_sweep", "03_shared_tiling", "04_thread_coarsening",
                          "05_register_tiling", "06_roofline"], stages
        assert sum(r["implementation"] == "exercise" for r in doc["runs"]) == 1
        assert {p["stage"] for p in doc["profiles"]} == set(stages)
        assert {p["n"] for p in doc["profiles"]} == {256}
        assert [a["n"] for a in doc["alternatives"]] == [512, 512]
        hs = sorted({r["h"] for r in doc["convergence"]["rows"]})
        assert len(hs) >= 12 and abs(hs[-1] / hs[-2] - 2) < 1e-3, "h should halve about 12 times"
        heat = doc["heat"]
        assert {(r["bc"], r["precision"]) for r in heat["runs"] if r["n"] == 512} == {
            (bc, p) for bc in ("dirichlet", "neumann", "periodic") for p in ("float", "double", "half", "bf16")}
        assert [r["n"] for r in heat["overhead"]] == [32, 64]
        assert sorted({r["precision"] for r in heat["accuracy"]}) == ["double", "half"]
        assert [len(s["plane"]) for s in heat["snapshots"]["snapshots"]] == [4, 4, 4]
        assert [r["n"] for r in heat["jacobi"]] == [32, 64]

    @test
    def validator_rejects_each_mutation():
        for mutate in MUTATIONS + HEAT_MUTATIONS:
            doc = fixture()
            expected = mutate(doc)
            rejects(doc, expected)
        rejects([], "the file holds a list, expected one JSON object")

    @test
    def validator_accepts_what_heat_may_leave_out():
        # A failed heat run carries no timings (the program times only what passed), a failed
        # picture may hold null cells, and the whole section may be null or absent (older files).
        doc = fixture()
        i = heat_index(doc, "runs", "bf16", bc="periodic")
        fail_heat_run(doc["heat"]["runs"][i], wrong=12)["analytic_error"] = None
        doc["heat"]["snapshots"]["check"]["ok"] = False
        doc["heat"]["snapshots"]["snapshots"][1]["plane"][0][0] = None
        j = doc["heat"]["jacobi"][1]
        j.update(converged=False, stalled=True, error=None, residual=None)
        validate(doc)
        doc["heat"]["snapshots"] = None
        for part in ("runs", "overhead", "accuracy", "jacobi"):
            doc["heat"][part] = []
        validate(doc)
        doc["heat"] = None
        validate(doc)
        del doc["heat"]
        validate(doc)

    @test
    def validator_accepts_what_may_be_absent():
        # A failed run carries no timings and is not plotted; null counters, no profiles, no
        # convergence and no alternatives are all fine.
        doc = fixture()
        i = timed_run_index(doc, "05_register_tiling", n=128)
        r = doc["runs"][i]
        r["check"].update(ok=False, wrong=17, max_rel_err=None)
        for k in ("time_ms", "copy_ms", "points_per_s", "gflops", "gbps", "copy_gbps", "fraction_of_copy"):
            del r[k]
        doc["profiles"][0]["opb_dram"] = None
        validate(doc)
        doc["profiles"] = []
        doc["convergence"] = None
        doc["alternatives"] = []
        validate(doc)
        for k in ("profiles", "convergence", "alternatives", "profile_note", "nvcc", "driver"):
            del doc[k]
        validate(doc)

    @test
    def load_results_reports_file_problems():
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            cases = {"missing.json": (None, "no such file"),
                     "empty.json": ("", "file is empty"),
                     "blank.json": ("  \n", "file is empty"),
                     "broken.json": ('{"schema": "pmpp-stencil-results/1", ', "not valid JSON"),
                     "latin1.json": (b"\xff\xfe{}", "not valid JSON")}
            for name, (content, expected) in cases.items():
                path = tmp / name
                if isinstance(content, bytes):
                    path.write_bytes(content)
                elif content is not None:
                    path.write_text(content)
                try:
                    load_results(path)
                except ResultsError as e:
                    assert str(e) == f"{path}: {e.detail}", str(e)
                    assert expected in e.detail, f"{name}: {e.detail!r} does not contain {expected!r}"
                else:
                    raise AssertionError(f"load_results accepted {name}")

    @test
    def shipped_results_validate():
        import many_gpus
        shipped = sorted((PLOTS / "results").glob("*.json")) if (PLOTS / "results").is_dir() else []
        for path in shipped:
            if path.name.startswith(many_gpus.PREFIX):  # stage 09's scaling: its own schema
                many_gpus.validate(json.loads(path.read_text()))
            else:
                load_results(path)
        print(f"      ({len(shipped)} shipped results file(s) in plots/results/)")


def bench_tests():
    import heat_bench  # plots/heat_bench.py; standard library only
    from bench import BenchStopped

    @test
    def stencil_commit_names_the_commit():
        # A copy whose .git is stale names its commit; without the variable, git's answer stands.
        from bench import environment
        root = Path(__file__).resolve().parent.parent
        saved = os.environ.pop("STENCIL_COMMIT", None)
        try:
            os.environ["STENCIL_COMMIT"] = "abc1234"
            assert environment(root)["commit"] == "abc1234"
            del os.environ["STENCIL_COMMIT"]
            assert environment(root)["commit"] != "abc1234"
        finally:
            os.environ.pop("STENCIL_COMMIT", None)
            if saved is not None:
                os.environ["STENCIL_COMMIT"] = saved

    @test
    def only_08_replaces_that_part_and_names_its_run():
        import bench
        doc = fixture()
        fresh = copy.deepcopy(doc["heat"]["fused"])
        fresh[0]["copy_gbps"] *= 1.01
        with tempfile.TemporaryDirectory() as tmp, \
                patched(bench, RESULTS=Path(tmp), gpu_present=lambda build: (True, ""), draw=lambda d, name: 0), \
                patched(heat_bench, measure_fused=lambda p07, p08, reps, folder: copy.deepcopy(fresh)):
            path = Path(tmp) / f"{bench.slug(fresh[0]['device'])}.json"
            code, printed = quietly(bench.only_fused, PLOTS.parent, Path(tmp), 7)
            assert code == 1 and "run the whole bench first" in printed, printed
            path.write_text(json.dumps(doc))
            code, printed = quietly(bench.only_fused, PLOTS.parent, Path(tmp), 7)
            assert code == 0, printed
            after = json.loads(path.read_text())
        assert after["heat"]["fused"] == fresh, "the stage 08 part is the new one"
        assert {k: v for k, v in after.items() if k != "heat"} == {k: v for k, v in doc.items() if k != "heat"}
        assert after["heat"]["runs"] == doc["heat"]["runs"], "the rest is kept"
        assert set(after["heat"]["fused_run"]) == {"date", "commit", "nvcc", "driver"}
        validate(after)

    @test
    def only_10_replaces_that_part_and_names_its_run():
        import bench
        doc = fixture()
        fresh = copy.deepcopy(doc["high_order"])
        fresh["runs"][0]["copy_gbps"] *= 1.01
        del doc["high_order"]
        calls = []

        def measure_runs(part, measured, build, a, tmp, number):
            calls.append(part.key)
            measured["high_order"] = {**fresh, "alternatives": []}

        def measure_alternatives(high, reps, full):
            calls.append("alternatives")
            high["alternatives"] += copy.deepcopy(fresh["alternatives"])
        with tempfile.TemporaryDirectory() as tmp, \
                patched(bench, RESULTS=Path(tmp), gpu_present=lambda build: (True, ""), draw=lambda d, name: 0,
                        run_high_order=measure_runs, order_alternatives=measure_alternatives):
            (Path(tmp) / "stage_10_high_order_solution").touch()
            path = Path(tmp) / f"{bench.slug(fresh['runs'][0]['device'])}.json"
            code, printed = quietly(bench.main, PLOTS.parent, Path(tmp), [], None, ["--only-10"])
            assert code == 1 and "run the whole bench first" in printed, printed
            path.write_text(json.dumps(doc))
            code, printed = quietly(bench.main, PLOTS.parent, Path(tmp), [], None, ["--only-10"])
            assert code == 0, printed
            after = json.loads(path.read_text())
        assert calls == ["high_order", "alternatives"] * 2, calls
        assert {k: v for k, v in after["high_order"].items() if k != "run"} == fresh, "stage 10's part is the new one"
        assert set(after["high_order"]["run"]) == {"date", "commit", "nvcc", "driver"}
        assert {k: v for k, v in after.items() if k != "high_order"} == doc, "the rest is kept"
        validate(after)

    @test
    def only_heat_replaces_that_part_and_names_its_run():
        import bench
        doc = fixture()
        doc["heat"]["fused_run"] = {"date": "2020-01-01T00:00:00Z", "commit": "old", "nvcc": "1", "driver": "1"}
        fresh = copy.deepcopy({k: v for k, v in doc["heat"].items() if k != "fused_run"})
        fresh["runs"][0]["copy_gbps"] *= 1.01
        fresh["fused"][0]["copy_gbps"] *= 1.01
        calls = []

        def measure_heat(part, measured, build, a, tmp, number):
            calls.append(part.key)
            measured["heat"] = copy.deepcopy({k: v for k, v in fresh.items() if k != "fused"})

        def measure_fused(part, measured, build, a, tmp, number):
            calls.append(part.key)
            measured["heat"]["fused"] = copy.deepcopy(fresh["fused"])
        with tempfile.TemporaryDirectory() as tmp, \
                patched(bench, RESULTS=Path(tmp), gpu_present=lambda build: (True, ""), draw=lambda d, name: 0,
                        run_heat=measure_heat, run_fused=measure_fused):
            code, printed = quietly(bench.main, PLOTS.parent, Path(tmp), [], None, ["--only-heat"])
            assert code == 1 and "stage 07 was not built" in printed and not calls, printed
            for stage in ("07_heat_equation", "08_temporal_blocking"):
                (Path(tmp) / f"stage_{stage}_solution").touch()
            path = Path(tmp) / f"{bench.slug(fresh['runs'][0]['device'])}.json"
            code, printed = quietly(bench.main, PLOTS.parent, Path(tmp), [], None, ["--only-heat"])
            assert code == 1 and "run the whole bench first" in printed, printed
            path.write_text(json.dumps(doc))
            code, printed = quietly(bench.main, PLOTS.parent, Path(tmp), [], None, ["--only-heat"])
            assert code == 0 and "stages 07 and 08's part" in printed, printed
            after = json.loads(path.read_text())
        assert calls == ["heat", "fused"] * 2, calls
        assert after["heat"]["runs"] == fresh["runs"] and after["heat"]["fused"] == fresh["fused"], \
            "stages 07 and 08's part is the new one"
        assert {k: v for k, v in after["heat"].items() if k != "run"} == fresh, "no fused_run of the old part"
        assert set(after["heat"]["run"]) == {"date", "commit", "nvcc", "driver"}
        assert json.dumps({k: v for k, v in after.items() if k != "heat"}) == \
            json.dumps({k: v for k, v in doc.items() if k != "heat"}), "the rest is kept, in its order"
        validate(after)
        # --only-heat alone is the main bench's heat part; with --no-heat it still contradicts itself
        assert bench.parse(["--only-heat"]).only_heat and bench.parse(["--sweep", "--only-heat"]).sweep
        try:
            with contextlib.redirect_stderr(io.StringIO()) as err:
                bench.parse(["--only-heat", "--no-heat"])
        except SystemExit as e:
            assert e.code == 2 and "contradict" in err.getvalue(), err.getvalue()
        else:
            raise AssertionError("--only-heat --no-heat parsed")
        # one --only-* at a time, --only-08 has no sweep, --only-10 cannot leave stage 10 out
        for argv, message in ((["--only-08", "--only-10"], "--only-08 and --only-10: each measures one part"),
                              (["--sweep", "--only-heat", "--only-10"], "--only-10 and --only-heat"),
                              (["--sweep", "--only-08"], "--only-08 has no sweep"),
                              (["--only-10", "--no-high-order"], "contradict")):
            try:
                with contextlib.redirect_stderr(io.StringIO()) as err:
                    bench.parse(argv)
            except SystemExit as e:
                assert e.code == 2 and message in err.getvalue(), (argv, err.getvalue())
            else:
                raise AssertionError(f"{argv} parsed")
        assert bench.parse(["--sweep", "--only-10"]).only_10

    @test
    def heat_bench_measures_every_part():
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            program = fake_heat_program(tmp)
            heat, printed = quietly(heat_bench.measure, program, "128,256,512", 7, tmp)
            calls = [json.loads(line) for line in (tmp / "calls.jsonl").read_text().splitlines()]
        assert len(calls) == 12 + 1 + 4 + 1 + 1, calls
        assert calls[0][:8] == ["--n", "128,512", "--steps", "100", "--reps", "7", "--bc", "dirichlet"], calls[0]
        assert {(c[c.index("--bc") + 1], c[c.index("--precision") + 1]) for c in calls[:12]} == {
            (bc, p) for bc in ("dirichlet", "neumann", "periodic") for p in ("float", "double", "half", "bf16")}
        assert calls[12][:6] == ["--n", "32,64", "--steps", "100", "--reps", "7"], calls[12]
        for c in calls[13:17]:
            assert c[:5] == ["--n", "16,24,32,48,64,96,128", "--t-end", "0.02", "--check-only"], c
        assert calls[17][:6] == ["--n", "128", "--t-end", "0.02", "--snapshots", "5"], calls[17]
        assert calls[18][:3] == ["--jacobi", "--n", "32,64,128"], calls[18]
        assert [len(heat[k]) for k in ("runs", "overhead", "accuracy", "jacobi")] == [24, 2, 28, 3]
        assert heat["snapshots"]["n"] == 128 and heat["snapshots"]["snapshots"]
        failed = {(r["bc"], r["precision"]) for r in heat["runs"] if not r["check"]["ok"]}
        assert failed == {("periodic", "bf16")}, failed
        assert "periodic boundaries, bf16" in printed and "gave wrong results" in printed, printed
        assert printed.count("[07 ") == 19, printed
        doc = fixture()
        doc["heat"] = heat
        validate(doc)
        _, table = quietly(heat_bench.summary, heat)
        assert re.search(r"\bperiodic +bf16 +512 +check FAILED", table), table
        assert "launch overhead" in table and "Jacobi" in table, table

    @test
    def stage_08_is_measured_beside_stage_07():
        jobs = heat_bench.fused_jobs(7)
        sweep, pairs = jobs[:5], jobs[5:]
        assert [(stage, opts[opts.index("--fuse") + 1] if "--fuse" in opts else None) for stage, _, opts in sweep] == [
            ("07", None), ("08", "1"), ("08", "2"), ("08", "4"), ("08", "8")], jobs
        for _, _, opts in sweep:  # the same sizes, steps (a multiple of every S) and problem for both stages
            assert opts[:10] == ["--n", "256,512", "--steps", "64", "--reps", "7", "--bc", "dirichlet",
                                 "--precision", "float"], opts
        # every other boundary condition and precision: 07 and 08 at S = 4, each checked at 128 and
        # then timed at 512 with --time-only
        def option(opts, name):
            return opts[opts.index(name) + 1] if name in opts else None
        measured = {}
        for stage, _, opts in pairs:
            key = (option(opts, "--bc"), option(opts, "--precision"), stage, option(opts, "--fuse"))
            measured.setdefault(key, []).append((option(opts, "--n"), "--check-only" in opts, "--time-only" in opts))
        others = [(bc, p) for bc in BOUNDARIES for p in PRECISIONS if (bc, p) != ("dirichlet", "float")]
        assert sorted(measured) == sorted([(bc, p, "07", None) for bc, p in others]
                                          + [(bc, p, "08", "4") for bc, p in others]), sorted(measured)
        assert all(runs == [("128", True, False), ("512", False, True)] for runs in measured.values()), measured
        heat = fixture()["heat"]
        _, table = quietly(heat_bench.summary, heat)
        # the fixture's 08 at S = 4, N = 512: 260 G/s against stage 07's 350 in the same run
        assert re.search(r"\b08 +4 +dirichlet +float +512 +260\.0 +0\.74x", table), table
        assert re.search(r"\b07 +1 +dirichlet +float +512 +350\.0 +1\.00x", table), table
        # and each pair against its own stage 07: periodic half 1.2 × 260 over 1.6 × 350
        assert re.search(r"\b08 +4 +periodic +half +512 +312\.0 +0\.56x", table), table
        import heat_plot
        n, S, rates = heat_plot.fused_pairs([r for r in heat["fused"] if r["check"]["ok"]])
        assert (n, S) == (512, 4) and sorted(rates) == [("dirichlet", "float"), ("neumann", "float"),
                                                        ("periodic", "half")], (n, S, rates)
        assert abs(rates["neumann", "float"][0] / rates["neumann", "float"][1] - 0.9 * 260 / 350) < 1e-3, rates

    @test
    def heat_bench_stops_on_other_failures():
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            program = fake_heat_program(tmp, crash="jacobi")
            try:
                _, printed = quietly(heat_bench.measure, program, "64", 3, tmp)
            except BenchStopped as e:
                assert "stopped with exit 3" in str(e) and "Jacobi" in str(e), str(e)
            else:
                raise AssertionError("a program that exits 3 did not stop the bench")


def plot_tests():
    import plot  # plots/plot.py; needs matplotlib

    @test
    def fixture_draws_all_eight_figures():
        with tempfile.TemporaryDirectory() as out:
            p = run_plot(FIXTURE, out)
            assert p.returncode == 0, f"exit status {p.returncode}\n{p.stdout}\n{p.stderr}"
            printed = [Path(line) for line in p.stdout.splitlines() if line.endswith(".png")]
            assert [q.name for q in printed] == FIGURES + HEAT_FIGURES + HIGH_ORDER_FIGURES, f"printed {p.stdout!r}"
            assert "note" not in p.stdout, p.stdout
            for name in FIGURES + HEAT_FIGURES + HIGH_ORDER_FIGURES:
                check_png(Path(out) / name)

    @test
    def bad_files_exit_2_with_one_clear_line():
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            out = tmp / "out"
            expect_exit_2(tmp / "missing.json", out, "no such file")
            (tmp / "empty.json").write_text("")
            expect_exit_2(tmp / "empty.json", out, "file is empty")
            (tmp / "broken.json").write_text('{"schema": "pmpp-stencil-results/1",\n  "runs": [}\n')
            expect_exit_2(tmp / "broken.json", out, "not valid JSON")
            for mutate in (_wrong_schema, _drop_time, _text_median, _no_baseline, _heat_ragged_plane):
                doc = fixture()
                expected = mutate(doc)
                path = tmp / f"{mutate.__name__.strip('_')}.json"
                path.write_text(json.dumps(doc))
                expect_exit_2(path, out, expected)

    @test
    def no_convergence_draws_four_and_says_why():
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            doc = fixture()
            doc["convergence"] = None
            path = tmp / "no_convergence.json"
            path.write_text(json.dumps(doc))
            out = tmp / "out"
            p = run_plot(path, out)
            assert p.returncode == 0, f"exit status {p.returncode}\n{p.stdout}\n{p.stderr}"
            assert "convergence.png not drawn" in p.stdout, f"no note about convergence in {p.stdout!r}"
            for name in FIGURES[:4]:
                check_png(out / name)
            assert not (out / "convergence.png").exists(), "convergence.png drawn without data"

    @test
    def no_profiles_still_draws_opb():
        doc = fixture()
        doc["profiles"] = []
        doc["profile_note"] = "ncu was not found"
        notes = []
        with tempfile.TemporaryDirectory() as out:
            written = plot.draw_all(doc, out, note=notes.append)
            assert [p.name for p in written] == FIGURES + HEAT_FIGURES + HIGH_ORDER_FIGURES, written
            for name in FIGURES:
                check_png(Path(out) / name)
        assert any("no Nsight Compute profiles" in n for n in notes), notes

    @test
    def failed_runs_are_left_out_not_fatal():
        doc = fixture()
        i = timed_run_index(doc, "04_thread_coarsening", impl="exercise")
        r = doc["runs"][i]
        r["check"].update(ok=False, wrong=4096)
        for k in ("time_ms", "copy_ms", "points_per_s", "gflops", "gbps", "copy_gbps", "fraction_of_copy"):
            del r[k]
        doc["convergence"] = None
        notes = []
        with tempfile.TemporaryDirectory() as out:
            written = plot.draw_all(doc, out, note=notes.append)
            assert len(written) == 4 + len(HEAT_FIGURES) + len(HIGH_ORDER_FIGURES)
            for p in written:
                check_png(p)
        assert any(f"runs[{i}]" in n and "failed its check" in n for n in notes), notes


def heat_plot_tests():
    import plot  # plots/plot.py; needs matplotlib

    @test
    def no_heat_draws_the_old_figures_and_removes_stale_heat_ones():
        for absent in ("null", "missing"):
            doc = fixture()
            if absent == "null":
                doc["heat"] = None
            else:
                del doc["heat"]
            notes = []
            with tempfile.TemporaryDirectory() as out:
                out = Path(out)
                for name in HEAT_FIGURES:
                    (out / name).write_bytes(b"an old figure")
                written = plot.draw_all(doc, out, note=notes.append)
                assert [p.name for p in written] == FIGURES + HIGH_ORDER_FIGURES, written
                for name in FIGURES:
                    check_png(out / name)
                left = [name for name in HEAT_FIGURES if (out / name).exists()]
                assert not left, f"stale heat figures left in place: {left}"
            heat_notes = [n for n in notes if "stage 07" in n]
            assert len(heat_notes) == 1, notes
            assert all(name in heat_notes[0] for name in HEAT_FIGURES), heat_notes
            assert "not drawn" in heat_notes[0] and "removed the old" in heat_notes[0], heat_notes

    @test
    def heat_figures_without_their_data_are_not_drawn():
        doc = fixture()
        doc["heat"]["snapshots"] = None
        doc["heat"]["accuracy"] = []
        notes = []
        with tempfile.TemporaryDirectory() as out:
            out = Path(out)
            (out / "heat_maps.png").write_bytes(b"an old figure")
            written = plot.draw_all(doc, out, note=notes.append)
            assert [p.name for p in written] == FIGURES + ["heat_rates.png", "temporal_blocking.png"] + HIGH_ORDER_FIGURES, \
                written
            assert not (out / "heat_maps.png").exists(), "the stale heat_maps.png was left in place"
            assert not (out / "heat_accuracy.png").exists()
        assert any("heat_maps.png not drawn" in n and "removed the old" in n for n in notes), notes
        assert any("heat_accuracy.png not drawn" in n for n in notes), notes

    @test
    def temporal_blocking_needs_stage_08_runs():
        doc = fixture()
        doc["heat"]["fused"] = [r for r in doc["heat"]["fused"] if r["stage"].startswith("07")]
        notes = []
        with tempfile.TemporaryDirectory() as out:
            written = plot.draw_all(doc, out, note=notes.append)
            assert "temporal_blocking.png" not in [p.name for p in written], written
        assert any("temporal_blocking.png not drawn" in n and "stage 08" in n for n in notes), notes

    @test
    def failed_heat_runs_are_left_out_not_fatal():
        doc = fixture()
        i = heat_index(doc, "runs", "half", bc="neumann")
        fail_heat_run(doc["heat"]["runs"][i], ghosts_wrong=2048)
        j = heat_index(doc, "accuracy", "double", n=128)
        doc["heat"]["accuracy"][j]["check"]["ok"] = False
        notes = []
        with tempfile.TemporaryDirectory() as out:
            written = plot.draw_all(doc, out, note=notes.append)
            assert [p.name for p in written] == FIGURES + HEAT_FIGURES + HIGH_ORDER_FIGURES, written
            for p in written:
                check_png(p)
        assert any(f"heat.runs[{i}] (neumann half, n=512) failed its check" in n for n in notes), notes
        assert any(f"heat.accuracy[{j}] (dirichlet double, n=128) failed its check" in n for n in notes), notes

    @test
    def order_of_accuracy_is_fitted_where_the_error_falls():
        import heat_plot
        doc = fixture()
        curves = {prec: [(r["n"], r["h"], r["analytic_error"]) for r in doc["heat"]["accuracy"]
                         if r["precision"] == prec] for prec in ("double", "half")}
        p, upto = heat_plot.fit_order(curves["double"])
        assert abs(p - 2) < 0.05 and upto == 128, (p, upto)
        p, upto = heat_plot.fit_order(curves["half"])  # falls from N = 16 to 24, then rounding wins
        assert upto == 24, (p, upto)
        assert heat_plot.fit_order([(16, 1 / 15, 1e-3), (32, 1 / 31, 2e-3)]) == (None, None)
        assert heat_plot.fit_order([(16, 1 / 15, 1e-3)]) == (None, None)

    @test
    def sweep_figure_is_drawn():
        import sweep
        with tempfile.TemporaryDirectory() as out:
            path = sweep.draw_sweep(sweep_fixture(), Path(out) / "sweep.png")
            check_png(path)

    @test
    def sweep_heat_figure_is_drawn():
        import sweep
        with tempfile.TemporaryDirectory() as out:
            path = sweep.draw_sweep_heat(sweep_fixture(), Path(out) / "sweep_heat.png")
            check_png(path)
            # draw(): both figures with the heat part; without it sweep_heat.png is not drawn (and an
            # old one is removed)
            assert quietly(sweep.draw, sweep_fixture(), out, print)[0] == 0
            assert (Path(out) / "sweep.png").exists() and (Path(out) / "sweep_heat.png").exists()
            doc = sweep_fixture()
            del doc["heat"]
            _, printed = quietly(sweep.draw, doc, out, print)
            assert not (Path(out) / "sweep_heat.png").exists() and "sweep_heat.png not drawn" in printed, printed

    @test
    def roofline_has_both_roofs_and_textbook_markers():
        import matplotlib.pyplot as plt
        captured = {}
        real_save = plot.save

        def keep(fig, path, doc, what):
            captured[Path(path).name] = fig
            return real_save(fig, path, doc, what)
        plot.save = keep
        try:
            with tempfile.TemporaryDirectory() as out:
                plot.draw_roofline(fixture(), Path(out) / "roofline.png")
                check_png(Path(out) / "roofline.png")
                doc = fixture()
                for r in doc["runs"]:
                    del r["device_peak"]
                plot.draw_roofline(doc, Path(out) / "old.png")
        finally:
            plot.save = real_save
        del plt
        # The fixture's H100 figures: 132 × 128 × 2 × 1.98 GHz = 66.9 TFLOP/s.
        old = [t.get_text() for t in captured["old.png"].axes[0].get_legend().get_texts()]
        assert any(t.startswith("compute roof: not in this results file") for t in old), old
        for fig in (captured["roofline.png"],):
            ax = fig.axes[0]
            texts = [t.get_text() for t in ax.get_legend().get_texts()]
            assert any("compute roof: FP32 peak 66.9 TFLOP/s" in t and "derived" in t for t in texts), texts
            assert any(t.startswith("hollow: the book's textbook OP/B") for t in texts), texts
            assert not any(t.startswith("x = ") for t in texts), texts  # the old, unused marker key
            # Hollow markers (white faces) at each solution's textbook OP/B: 0.46 for stage 02.
            hollow = [c.get_offsets()[0] for c in ax.collections
                      if len(c.get_offsets()) and tuple(c.get_facecolors()[0][:3]) == (1.0, 1.0, 1.0)]
            assert any(abs(x - 0.4643) < 1e-3 for x, _ in hollow), hollow
            assert len(hollow) == 5, hollow

    @test
    def high_order_figure_is_drawn_or_says_why_not():
        import high_order_plot
        with tempfile.TemporaryDirectory() as out:
            path = high_order_plot.draw_high_order(fixture(), Path(out) / "high_order.png")
            check_png(path)
            doc = fixture()
            for r in doc["high_order"]["runs"]:
                r["check"]["ok"] = False
            notes = []
            assert high_order_plot.draw(doc, Path(out), notes.append) == []
            assert not (Path(out) / "high_order.png").exists(), "the stale figure was left"
        assert any("high_order.png not drawn" in n for n in notes), notes

    @test
    def roofline_view_legend_and_markers():
        captured = {}
        real_save = plot.save
        plot.save = lambda fig, path, doc, what: captured.setdefault("fig", fig) and real_save(fig, path, doc, what)
        try:
            with tempfile.TemporaryDirectory() as out:
                plot.draw_roofline(fixture(), Path(out) / "roofline.png")
        finally:
            plot.save = real_save
        ax = captured["fig"].axes[0]
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert any(t.startswith("textbook bound: 13/4 = 3.25 OP/B") for t in texts), texts
        low, high = ax.get_ylim()
        gflops = [r["gflops"] for r in fixture()["runs"] if r["n"] == 512]
        assert high < 10 * max(gflops) and low > min(gflops) / 10, (low, high, gflops)  # not 10^6
        assert any("above this view" in t for t in texts), texts  # the compute roof, 15× the data
        # no two markers of a kind at one place: 04 and 05 share their OP/B and nearly their height
        places = [tuple(c.get_offsets()[0]) for c in ax.collections if len(c.get_offsets())]
        assert len(places) == len(set(places)), places

    @test
    def temporal_blocking_legend_names_the_tiles_as_lesson_08():
        import heat_plot
        mine = [r for r in fixture()["heat"]["fused"]
                if r["n"] == 512 and r["stage"].startswith("08") and heat_plot._is_sweep(r)]
        text = heat_plot.tiles_text(mine)
        assert text.splitlines() == ["  reads 32 × 128, writes 30 × 120 (S = 1), 28 × 120 (S = 2), 24 × 120 (S = 4)",
                                     "  reads 32 × 64, writes 16 × 48 (S = 8)"], text
        lesson = (ROOT / "chapters" / "08_temporal_blocking" / "README.md").read_text()
        for row in ("| 1 | 2 × 4 | 32 × 128 | 30 × 120 |", "| 8 | 2 × 2 | 32 × 64 | 16 × 48 |"):
            assert row in lesson, row
        assert "reads 32 × 128 cells and writes 30 × 120" in lesson

    @test
    def draw_all_validates():
        doc = fixture()
        doc["schema"] = "pmpp-stencil-results/0"
        with tempfile.TemporaryDirectory() as out:
            try:
                plot.draw_all(doc, out)
            except ResultsError as e:
                assert "schema is 'pmpp-stencil-results/0'" in str(e), str(e)
            else:
                raise AssertionError("draw_all accepted a wrong schema")


# --- the sweep (course.py bench --sweep) ---------------------------------------------------------

def sweep_fixture():
    return json.loads(SWEEP_FIXTURE.read_text(encoding="utf-8"))


def sweep_rejects(doc, expected):
    try:
        validate_sweep(doc)
    except ResultsError as e:
        assert expected in str(e), f"message {str(e)!r} does not contain {expected!r}"
        return
    raise AssertionError(f"validate_sweep() accepted a document that should fail with {expected!r}")


def stand_in(path, script, **fields):
    """Writes an executable stand-in program from `script` (FAKE_SWEEP and the like)."""
    path.write_text(script.format(python=sys.executable, **fields))
    os.chmod(path, 0o755)


def sweep_stand_ins(folder, log):
    """Stand-ins for the sweep's stages 02 and 06 in `folder`, each logging its arguments to `log`."""
    import sweep
    template = json.dumps(sweep_fixture()["points"][-1])
    for stage in sweep.SWEEP_STAGES:
        stand_in(folder / f"stage_{stage}_solution", FAKE_SWEEP, log=log, stage=stage, template=template)
    return template


def sweep_tests():
    import sweep  # plots/sweep.py; the figure part needs matplotlib, the rest does not

    @test
    def sweep_sizes_cover_every_remainder():
        sizes = sweep.sweep_sizes()
        assert sizes[0] == 64 and sizes[-1] == 1024 and sizes == sorted(set(sizes)), sizes[:5]
        for lo in range(64, 1024, 32):  # every remainder mod 4 in every stretch of 32
            assert {n % 4 for n in sizes if lo <= n < lo + 35} == {0, 1, 2, 3}, lo
        assert {509, 510, 511, 512, 513} & set(sizes) == {511, 512, 513}

    @test
    def sweep_fixture_is_valid_and_the_shipped_ones_too():
        doc = load_sweep(SWEEP_FIXTURE)
        assert doc["gpu"].startswith("FIXTURE")
        shipped = sorted((PLOTS / "results" / "sweep").glob("*.json"))
        for path in shipped:
            load_sweep(path)
        assert shipped, "no sweep results shipped in plots/results/sweep/"
        # The two kinds of results file are told apart: neither validates as the other.
        rejects(sweep_fixture(), "schema is 'pmpp-stencil-sweep/1'")
        sweep_rejects(fixture(), "schema is 'pmpp-stencil-results/1', expected 'pmpp-stencil-sweep/1'")

    @test
    def sweep_validator_rejects_each_mutation():
        def dup(d):
            d["points"].append(copy.deepcopy(d["points"][3]))
            return "repeats"

        def unchecked_small(d):
            d["points"][0]["check"] = {"checked": False}
            return "points[0].check.checked is false, but checked_up_to is 256"

        def ok_without_check(d):
            i = next(i for i, q in enumerate(d["points"]) if q["n"] > 256)
            d["points"][i]["check"]["ok"] = True
            return f"points[{i}].check.ok is given, but check.checked is false"

        def nan_fraction(d):
            d["points"][2]["fraction_of_copy"] = math.nan
            return "points[2].fraction_of_copy is nan"

        def no_points(d):
            d["points"] = []
            return "points is empty"

        def no_copy(d):
            del d["points"][1]["copy_ms"]
            return "points[1].copy_ms is missing"

        for mutate in (dup, unchecked_small, ok_without_check, nan_fraction, no_points, no_copy):
            doc = sweep_fixture()
            sweep_rejects(doc, mutate(doc))

    @test
    def sweep_runs_the_programs_and_keeps_its_own_file():
        # Stand-in programs record their arguments; the sweep checks small N, times every N with
        # --time-only, and writes plots/results/sweep/<gpu>.json, never plots/results/<gpu>.json.
        from bench import run_program, slug
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            sweep_stand_ins(tmp, str(tmp / "calls.jsonl"))
            results = tmp / "results"
            results.mkdir()
            (results / "fake-gpu.json").write_text("the ordinary results file")
            env = {"date": "d", "commit": "c", "nvcc": "n", "driver": "v"}
            status, printed = quietly(sweep.run_sweep, tmp, tmp, 3, env, slug, results, tmp / "figures", print,
                                      run_program, False, False)  # --no-heat --no-high-order: 02 and 06 only
            calls = [json.loads(line) for line in (tmp / "calls.jsonl").read_text().splitlines()]
            doc = load_sweep(results / "sweep" / "fake-gpu.json")
            assert (results / "fake-gpu.json").read_text() == "the ordinary results file"
        assert len(calls) == 4, calls
        assert "heat" not in doc and "high_order" not in doc, list(doc)
        check, timing = calls[0], calls[1]
        assert "--check-only" in check and max(map(int, check[check.index("--n") + 1].split(","))) == 256, check
        assert "--time-only" in timing and timing[timing.index("--reps") + 1] == "3", timing
        assert timing[timing.index("--n") + 1] == ",".join(map(str, sweep.sweep_sizes())), timing
        assert len(doc["points"]) == 2 * len(sweep.sweep_sizes())
        assert all(q["check"]["checked"] == (q["n"] <= 256) for q in doc["points"])
        assert "06_roofline" in printed and "least % of copy" in printed, printed


    @test
    def sweep_heat_part_is_optional_and_checked():
        doc = sweep_fixture()
        validate_sweep(doc)
        assert any(s["status"] == "measured" for s in doc["heat"]["series"])
        del doc["heat"]
        validate_sweep(doc)  # older files, and --no-heat, have none
        doc["heat"] = None
        validate_sweep(doc)

    @test
    def sweep_heat_validator_rejects_each_mutation():
        def index(d, stage, bc, precision="float"):
            return next(i for i, s in enumerate(d["heat"]["series"])
                        if s["stage"].startswith(stage) and s["bc"] == bc and s["precision"] == precision)

        def bad_bc(d):
            d["heat"]["series"][0]["bc"] = "robin"
            return "heat.series[0].bc is 'robin', expected one of 'dirichlet', 'neumann', 'periodic'"

        def no_fraction(d):
            del d["heat"]["series"][1]["points"][2]["fraction_of_copy"]
            return "heat.series[1].points[2].fraction_of_copy is missing"

        def text_rate(d):
            d["heat"]["series"][0]["points"][0]["updates_per_s"] = "fast"
            return "heat.series[0].points[0].updates_per_s is the string 'fast', expected a number"

        def bad_status(d):
            d["heat"]["series"][0]["status"] = "ok"
            return "heat.series[0].status is 'ok', expected one of 'measured', 'failed', 'not supported'"

        def failed_with_points(d):
            i, j = index(d, "07", "periodic", "half"), index(d, "07", "dirichlet")
            d["heat"]["series"][i]["points"] = copy.deepcopy(d["heat"]["series"][j]["points"])
            return f"heat.series[{i}].points is not empty, but status is 'failed'"

        def measured_after_failed_check(d):
            d["heat"]["series"][0]["check"][1]["ok"] = False
            return "heat.series[0].check[1].ok is false, but status is 'measured'"

        def wrong_speedup(d):
            i = index(d, "08", "neumann")
            d["heat"]["series"][i]["points"][3]["speedup_over_07"] = 9.0
            return f"heat.series[{i}].points[3].speedup_over_07 is 9.0, expected"

        def dup_series(d):
            d["heat"]["series"].append(copy.deepcopy(d["heat"]["series"][2]))
            return "repeats stage 07_heat_equation periodic float fused_steps 1 (first in heat.series[2])"

        def dup_point(d):
            d["heat"]["series"][0]["points"].append(copy.deepcopy(d["heat"]["series"][0]["points"][0]))
            return "heat.series[0].points[11] repeats at n=256"

        def no_sizes(d):
            d["heat"]["sizes"] = []
            return "heat.sizes is empty, expected the sizes timed"

        for mutate in (bad_bc, no_fraction, text_rate, bad_status, failed_with_points, measured_after_failed_check,
                       wrong_speedup, dup_series, dup_point, no_sizes):
            doc = sweep_fixture()
            sweep_rejects(doc, mutate(doc))

    @test
    def sweep_heat_runs_the_programs_as_the_issue_asks():
        # Stand-in programs for 02, 06, 07 and 08 record their arguments; this 08 refuses periodic
        # with exit 2, as a stage that does not run those boundaries would (recorded as not
        # supported), and 07's half periodic fails its check (exit 1: the series stops there,
        # recorded as failed, not timed).
        from bench import run_program, slug
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            log = str(tmp / "calls.jsonl")
            sweep_stand_ins(tmp, log)
            heat_point = json.dumps(sweep_fixture()["heat"]["series"][0]["points"][-1])
            for stage in (sweep.HEAT_STAGE, sweep.FUSED_STAGE):
                stand_in(tmp / f"stage_{stage}_solution", FAKE_SWEEP_HEAT, log=log, stage=stage, template=heat_point)
            results = tmp / "results"
            results.mkdir()
            env = {"date": "d", "commit": "c", "nvcc": "n", "driver": "v"}
            status, printed = quietly(sweep.run_sweep, tmp, tmp, 3, env, slug, results, tmp / "figures", print,
                                      run_program, True, False)  # --no-high-order (its own test above)
            calls = [json.loads(line) for line in Path(log).read_text().splitlines()]
            doc = load_sweep(results / "sweep" / "fake-gpu.json")
            assert status == 0 and (tmp / "figures" / "fake-gpu" / "sweep_heat.png").exists(), printed
            # --only-heat: the heat part again, with its own run; stages 02 and 06 as they were
            Path(log).unlink()
            later = {"date": "d2", "commit": "c2", "nvcc": "n", "driver": "v"}
            again, _ = quietly(sweep.run_heat_only, tmp, tmp, 3, later, slug, results, tmp / "figures", print,
                               run_program, load_sweep)
            redone = load_sweep(results / "sweep" / "fake-gpu.json")
            assert again == 0 and redone["points"] == doc["points"] and redone["commit"] == "c", redone["commit"]
            assert redone["heat"]["run"] == later and redone["heat"]["series"] == doc["heat"]["series"]
            assert all("--bc" in json.loads(c) for c in Path(log).read_text().splitlines())
            (results / "sweep" / "fake-gpu.json").unlink()
            try:
                quietly(sweep.run_heat_only, tmp, tmp, 3, later, slug, results, tmp / "figures", print,
                        run_program, load_sweep)
            except ResultsError as e:
                assert "run the whole sweep first" in str(e), str(e)
            else:
                raise AssertionError("--only-heat wrote a sweep file without stages 02 and 06")
        heat_calls = [c for c in calls if "--bc" in c]
        sizes = ",".join(map(str, sweep.sweep_sizes(256, 1024)))
        assert sizes.startswith("256,257,258,287,288,289,290,") and sizes.endswith(",1023,1024"), sizes
        expected = []
        assert sweep.HEAT_FUSE_CHOICES == (3, 4, 5, 6), sweep.HEAT_FUSE_CHOICES
        for stage, bc, precision, fuse in sweep.HEAT_SERIES:
            problem = (["--fuse", str(fuse), "--steps", str(2 * fuse)] if stage == sweep.FUSED_STAGE
                       else ["--steps", "2"])
            problem += ["--bc", bc, "--precision", precision]
            expected.append(["--check-only", "--n", "256,257,258,259", *problem])
            if (stage, bc) != (sweep.FUSED_STAGE, "periodic") and (bc, precision) != ("periodic", "half"):
                expected.append(["--time-only", "--n", sizes, *problem, "--reps", "3"])
        assert [c[:-2] for c in heat_calls] == expected, heat_calls
        assert all(c[-2] == "--json" for c in heat_calls), heat_calls
        assert [(s["bc"], s["precision"]) for s in doc["heat"]["series"][:6]] == [
            ("dirichlet", "float"), ("neumann", "float"), ("periodic", "float"), ("dirichlet", "half"),
            ("neumann", "half"), ("periodic", "half")]
        status_of = {(s["stage"][:2], s["bc"], s["precision"]): s["status"] for s in doc["heat"]["series"]}
        assert status_of[("08", "periodic", "float")] == "not supported", status_of
        assert status_of[("07", "periodic", "half")] == "failed", status_of
        assert status_of[("08", "dirichlet", "float")] == "measured", status_of
        fused = next(s for s in doc["heat"]["series"] if s["stage"] == sweep.FUSED_STAGE and s["bc"] == "dirichlet")
        assert fused["fused_steps"] == 3 and len(fused["points"]) == len(sweep.sweep_sizes(256, 1024))
        assert all(abs(p["speedup_over_07"] - (2.25 if p["n"] % 4 == 0 else 2.0)) < 1e-9
                   for p in fused["points"]), fused["points"][:2]
        # Stage 08 at its best S: the S that won at each N (3 + N % 4 in these stand-ins), and only
        # the boundaries and precisions measured (periodic was refused).
        best = sweep.best_fused(doc["heat"])
        assert sorted(best) == [("dirichlet", "float"), ("dirichlet", "half"), ("neumann", "float"),
                                ("neumann", "half")], sorted(best)
        assert [p["n"] for p in best[("dirichlet", "float")]] == sweep.sweep_sizes(256, 1024)
        assert all(p["fused_steps"] == 3 + p["n"] % 4 and abs(p["speedup_over_07"] - 2.25) < 1e-9
                   for p in best[("neumann", "half")]), best[("neumann", "half")][:3]
        assert "08 dirichlet float, S = 4" in printed and "2.00x over stage 07 at N =" in printed, printed
        assert "08 dirichlet float, best S: 3 at 25 N, 4 at 24 N, 5 at 24 N, 6 at 24 N: 2.25x over stage 07 " \
               "at N = 256 (S = 3)" in printed, printed
        assert "07 periodic half" in printed and "FAILED" in printed and "NOT SUPPORTED" in printed, printed
        assert "% of copy at N =" in printed, printed


    @test
    def sweep_high_order_runs_the_program_and_only_10_replaces_it():
        # Stand-ins for 02, 06 and 10: the sweep checks stage 10's fast kernel at every order at
        # N = 255..258, times it at every N from 255 to 1026, and --only-10 measures that part again.
        from bench import run_program, slug
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            log = str(tmp / "calls.jsonl")
            template = sweep_stand_ins(tmp, log)
            stand_in(tmp / f"stage_{sweep.HIGH_ORDER_STAGE}_solution", FAKE_SWEEP_ORDER, log=log, template=template,
                     fail=str(tmp / "fail"))
            results = tmp / "results"
            results.mkdir()
            env = {"date": "d", "commit": "c", "nvcc": "n", "driver": "v"}
            status, printed = quietly(sweep.run_sweep, tmp, tmp, 3, env, slug, results, tmp / "figures", print,
                                      run_program, False)  # --no-heat
            doc = load_sweep(results / "sweep" / "fake-gpu.json")
            calls = [json.loads(line) for line in Path(log).read_text().splitlines()]
            order_calls = [c for c in calls if "--order" in c]
            assert status == 0 and len(order_calls) == 2, order_calls
            check, timing = order_calls
            sizes = sweep.high_order_sizes()
            assert len(sizes) == 100 and sizes[:4] == [255, 256, 257, 258] and sizes[-3:] == [1024, 1025, 1026], sizes
            assert check[:7] == ["--check-only", "--kernel", "fast", "--order", "1,2,3,4", "--n", "255,256,257,258"]
            assert timing[:9] == ["--time-only", "--kernel", "fast", "--order", "1,2,3,4", "--n",
                                  ",".join(map(str, sizes)), "--reps", "3"], timing
            part = doc["high_order"]
            assert len(part["points"]) == 400 and part["checked_at"] == [255, 256, 257, 258] and "run" not in part
            assert {p["planes_per_chunk"] for p in part["points"]} == {16}, part["points"][0]
            assert "stage 10, fast kernel" in printed and "R = 4: least 50.0% at N = 255, 80.0% at N = 512" in printed, \
                printed
            # --only-10: the part again with its own run; the rest as it was
            Path(log).unlink()
            later = {"date": "d2", "commit": "c2", "nvcc": "n", "driver": "v"}
            again, _ = quietly(sweep.run_high_order_only, tmp, tmp, 3, later, slug, results, tmp / "figures", print,
                               run_program, load_sweep)
            redone = load_sweep(results / "sweep" / "fake-gpu.json")
            assert again == 0 and redone["points"] == doc["points"] and redone["commit"] == "c"
            assert redone["high_order"]["run"] == later and redone["high_order"]["points"] == part["points"]
            assert all("--order" in json.loads(c) for c in Path(log).read_text().splitlines())
            # a failed check: nothing timed, nothing written, a message that says how to look
            (tmp / "fail").touch()
            try:
                quietly(sweep.run_high_order_only, tmp, tmp, 3, later, slug, results, tmp / "figures", print,
                        run_program, load_sweep)
            except ResultsError as e:
                assert "failed its check: not timed" in str(e) and "course.py run 10" in str(e), str(e)
            else:
                raise AssertionError("--only-10 timed a kernel that failed its check")
            assert load_sweep(results / "sweep" / "fake-gpu.json") == redone
        # the validator: one point per order and N
        bad = copy.deepcopy(redone)
        bad["high_order"]["points"].append(copy.deepcopy(bad["high_order"]["points"][5]))
        sweep_rejects(bad, f"high_order.points[400] repeats {bad['high_order']['points'][5]['order']} at n=")
        bad = copy.deepcopy(redone)
        del bad["high_order"]["points"][0]["planes_per_chunk"]
        sweep_rejects(bad, "high_order.points[0].planes_per_chunk is missing")


# --- stage 10 (order R), --time-only records, the bench's plan ------------------------------------

# harness/sweep/order.cpp's random_star_coefficients(8, R), printed by the harness with %.9g
# (enough digits to give back every float): the alternatives must use these weights, bit for bit.
HARNESS_STAR_WEIGHTS = {
    1: "0.993804216 0.843418062 0.629262984 0.556829989 0.474590898 0.424272537 0.718001664",
    2: "0.317278862 0.560798347 0.230754346 0.356960684 0.997575164 0.798719108 0.654582202 0.901080668 "
       "0.252099663 0.82984817 0.456995726 0.626796126 0.125967994",
    3: "0.21084407 0.145856127 0.923737407 0.500756741 0.741850674 0.340394318 0.232477576 0.523370624 "
       "0.394611418 0.950774014 0.90265733 0.274073392 0.549987733 0.660445929 0.682528615 0.583991945 "
       "0.834018409 0.44688952 0.628973007",
    4: "0.2378463 0.780559003 0.361240953 0.121598236 0.211512655 0.840857625 0.685830593 0.644774854 "
       "0.279180646 0.420831323 0.587516248 0.863198638 0.494940132 0.75586462 0.331338286 0.538030863 "
       "0.888630271 0.455250829 0.973103344 0.386179984 0.177603304 0.925586283 0.609800458 0.713002324 "
       "0.801454425",
}


def high_order_index(doc, kernel, order, n, part="runs"):
    key = "name" if part == "alternatives" else "kernel"
    for i, r in enumerate(doc["high_order"][part]):
        if r[key] == kernel and r["order"] == order and r["n"] == n:
            return i
    raise AssertionError(f"fixture has no high_order.{part} {kernel} R={order} n={n}")


def high_order_tests():
    import alternatives
    import heat_bench
    import plan

    @test
    def high_order_section_is_optional_and_checked():
        doc = fixture()
        validate(doc)  # the fixture's section: N = 256 checked, 512 --time-only with checked_at
        del doc["high_order"]
        validate(doc)  # older files (the shipped one) have none
        doc["high_order"] = None
        validate(doc)

    @test
    def high_order_validator_rejects_each_mutation():
        def wrong_points(d):
            i = high_order_index(d, "tiled", 2, 256)
            d["high_order"]["runs"][i]["points"] = 19
            return f"high_order.runs[{i}].points is 19, expected 6·order + 1 = 13 (order 2)"

        def wrong_flops(d):
            i = high_order_index(d, "fast", 3, 512)
            d["high_order"]["runs"][i]["flops_per_point"] = 13
            return f"high_order.runs[{i}].flops_per_point is 13, expected 12·order + 1 = 37 (order 3)"

        def order_5(d):
            d["high_order"]["runs"][0].update(order=5, points=31, flops_per_point=61)
            return "high_order.runs[0].order is 5, expected 1, 2, 3 or 4"

        def bad_kernel(d):
            d["high_order"]["runs"][1]["kernel"] = "shared"
            return "high_order.runs[1].kernel is 'shared', expected one of 'basic', 'tiled', 'fast'"

        def duplicate(d):
            i = high_order_index(d, "basic", 4, 512)
            d["high_order"]["runs"].append(copy.deepcopy(d["high_order"]["runs"][i]))
            return f"repeats basic 4 at n=512 (first in high_order.runs[{i}])"

        def unchecked_without_where(d):
            i = high_order_index(d, "fast", 4, 512)
            del d["high_order"]["runs"][i]["checked_at"]
            return f"high_order.runs[{i}].checked_at is missing"

        def no_timing(d):
            i = high_order_index(d, "basic", 1, 256)
            del d["high_order"]["runs"][i]["time_ms"]
            return f"high_order.runs[{i}].time_ms is missing"

        def no_runs(d):
            d["high_order"]["runs"] = []
            return "high_order.runs is empty, expected stage 10's runs"

        def alternative_text_order(d):
            i = high_order_index(d, "CuPy ndimage.correlate", 2, 256, part="alternatives")
            d["high_order"]["alternatives"][i]["order"] = "2"
            return f"high_order.alternatives[{i}].order is the string '2', expected an integer"

        def alternative_duplicate(d):
            i = high_order_index(d, "PyTorch slicing (torch.compile)", 4, 512, part="alternatives")
            d["high_order"]["alternatives"].append(copy.deepcopy(d["high_order"]["alternatives"][i]))
            return "repeats 'PyTorch slicing (torch.compile)' 4 at n=512"

        for mutate in (wrong_points, wrong_flops, order_5, bad_kernel, duplicate, unchecked_without_where, no_timing,
                       no_runs, alternative_text_order, alternative_duplicate):
            doc = fixture()
            rejects(doc, mutate(doc))

    @test
    def time_only_records_name_where_they_were_checked():
        # A --time-only record of stages 02-06 (as the quick bench stores it) validates with
        # checked_at, and is refused without; so are stage 07's and an alternative's.
        from common import unchecked
        doc = fixture()
        i = timed_run_index(doc, "06_roofline", n=512)
        r = doc["runs"][i]
        r["check"] = {"checked": False}  # what the harness writes with --time-only
        unchecked(r, True, [128, 256])
        assert r["check"] == {"ok": True, "checked": False} and r["checked_at"] == [128, 256], r
        validate(doc)
        del r["checked_at"]
        rejects(doc, f"runs[{i}].checked_at is missing")
        doc = fixture()
        j = heat_index(doc, "runs", "half", bc="neumann")
        h = doc["heat"]["runs"][j]
        h.update(checked=False, analytic_error=None, conservation=None)  # the harness's --time-only record
        rejects(copy.deepcopy(doc), f"heat.runs[{j}].checked_at is missing")
        unchecked(h, True, [128])
        validate(doc)
        h["checked"] = True  # a checked record must carry its analytic error
        del h["check"]["checked"], h["checked_at"]
        rejects(doc, f"heat.runs[{j}].analytic_error is null, expected a number")
        doc = fixture()
        unchecked(doc["alternatives"][0], True, [])
        rejects(doc, "alternatives[0].checked_at is empty, expected the sizes where the same program")

    @test
    def star_weights_are_the_harness_weights_bit_for_bit():
        import numpy as np
        for R, text in HARNESS_STAR_WEIGHTS.items():
            got = alternatives.star_coefficients(R)
            want = [np.float32(float(x)) for x in text.split()]
            assert len(got) == 6 * R + 1 == len(want), (R, len(got))
            assert all(np.float32(g) == w and float(np.float32(g)) == g for g, w in zip(got, want)), (R, got, want)
        # R = 1 keeps its own, older weights (stages 02-06: harness/grid.cpp)
        assert alternatives.course_coefficients()[0] != alternatives.star_coefficients(1)[0]

    @test
    def star_reference_matches_a_loop_in_float64():
        import numpy as np
        n = 11
        x = np.random.default_rng(5).uniform(0.5, 1.5, (n, n, n)).astype(np.float32)
        for R in (1, 2, 4):
            w = alternatives.star_coefficients(R)
            got = alternatives.star_reference(x, R, w)
            assert got.shape == (n - 2 * R,) * 3 and got.dtype == np.float64
            worst = 0.0
            for i in range(R, n - R):
                for j in range(R, n - R):
                    for k in range(R, n - R):
                        total = w[0] * float(x[i, j, k])
                        for d in range(1, R + 1):
                            b = 1 + 6 * (d - 1)  # k-1, k+1, j-1, j+1, i-1, i+1
                            total += (w[b] * float(x[i, j, k - d]) + w[b + 1] * float(x[i, j, k + d])
                                      + w[b + 2] * float(x[i, j - d, k]) + w[b + 3] * float(x[i, j + d, k])
                                      + w[b + 4] * float(x[i - d, j, k]) + w[b + 5] * float(x[i + d, j, k]))
                        worst = max(worst, abs(total - got[i - R, j - R, k - R]) / abs(total))
            assert worst < 1e-14, (R, worst)
            kernel = alternatives.star_kernel(R, w)
            assert kernel.shape == (2 * R + 1,) * 3 and np.count_nonzero(kernel) == 6 * R + 1
            assert kernel[R, R, R] == np.float32(w[0]) and kernel[R, R, R - 1] == np.float32(w[1])  # k-1
            assert kernel[R + 1, R, R] == np.float32(w[6])  # i+1

    @test
    def high_order_summary_table():
        import high_order_plot
        lines = []
        high_order_plot.summary(fixture()["high_order"], lines.append)
        table = "\n".join(lines)
        assert re.search(r"\b4 +25 +512 .*88\.0% +2\.67x", table), table
        assert "PyTorch slicing (torch.compile)    R = 4" in table, table
        assert "N = 512 timed with --time-only" in table and "checked at N = 256" in table, table

    # --- the plan of `course.py bench` ---------------------------------------------------------

    stages = ["02_basic_sweep", "03_shared_tiling", "04_thread_coarsening", "05_register_tiling", "06_roofline"]
    build = Path("/build")

    def the_plan(full, **kw):
        return plan.main_plan(build, [128, 256, 512], None, full, one_sweep=[(s, "solution") for s in stages], **kw)

    @test
    def default_plan_fits_in_five_minutes_on_an_h100():
        parts = the_plan(False)
        assert [p.key for p in parts] == ["one_sweep"] * 5 + ["convergence", "heat", "fused", "high_order", "ncu",
                                                              "alternatives", "draw"], parts
        assert plan.total(parts) <= plan.TARGET_S, f"{plan.total(parts):.0f} s: {parts}"
        full = the_plan(True)
        assert plan.total(full) >= 1.8 * plan.total(parts), (plan.total(full), plan.total(parts))
        # the largest size timed with --time-only, the others checked; fewer repetitions
        first = parts[0].commands
        assert first == [[build / "stage_02_basic_sweep_solution", "--n", "128,256", "--reps", 20],
                         [build / "stage_02_basic_sweep_solution", "--n", "512", "--reps", 20, "--time-only"]], first
        ncu = [p for p in parts if p.key == "ncu"][0].commands
        assert all(c[1:] == ["--n", 512, "--time-only", "--reps", 1, "--warmup", 0] for c in ncu), ncu
        heat = [p for p in parts if p.key == "heat"][0].commands
        time_only = [c for c in heat if "--time-only" in c]
        assert len(time_only) == 12 and all(c[c.index("--n") + 1] == "512" for c in time_only), time_only
        assert not any("--snapshots" in c and "--t-end" in c and c[c.index("--n") + 1] == "128" for c in heat), \
            "the quick plan takes the pictures in the float accuracy run"
        high = [p for p in parts if p.key == "high_order"][0].commands
        assert [c[c.index("--n") + 1] for c in high] == ["256", "512"] and "--time-only" in high[1], high
        # every measuring part still has a checked run at some size (the profiles are of programs
        # the one-sweep parts check)
        assert all(any("--time-only" not in c for c in p.commands) for p in parts if p.commands and p.key != "ncu")

    @test
    def full_plan_is_the_old_measurement():
        parts = the_plan(True)
        for p, stage in zip(parts, stages):
            assert p.commands == [[build / f"stage_{stage}_solution", "--n", "128,256,512", "--reps", 50]], p.commands
        heat = [p for p in parts if p.key == "heat"][0]
        assert heat.commands == [[build / "stage_07_heat_equation_solution", *o]
                                 for _, _, o in heat_bench.jobs("128,256,512", 50)]
        fused = [p for p in parts if p.key == "fused"][0]
        assert [c[1:] for c in fused.commands] == [o for _, _, o in heat_bench.fused_jobs(50)]
        ncu = [p for p in parts if p.key == "ncu"][0]
        assert all(c[1:] == ["--n", 512, "--check-only"] for c in ncu.commands), ncu.commands
        high = [p for p in parts if p.key == "high_order"][0]
        assert len(high.commands) == 1 and "--time-only" not in high.commands[0]
        # --reps overrides every part's repetitions
        quick = plan.main_plan(build, [64, 128], 3, False, one_sweep=[("02_basic_sweep", "solution")])
        assert quick[0].commands[0][-1] == 3 and [p for p in quick if p.key == "heat"][0].extra["reps"] == 3

    @test
    def plan_leaves_out_what_is_not_there():
        parts = the_plan(False, heat=False, fused=False, high_order=False, ncu=False, alternatives=False,
                         convergence=False)
        assert [p.key for p in parts] == ["one_sweep"] * 5 + ["draw"], parts
        one = plan.main_plan(build, [256], None, False, one_sweep=[("02_basic_sweep", "solution")])
        assert one[0].commands == [[build / "stage_02_basic_sweep_solution", "--n", "256", "--reps", 20]], \
            "a single size is checked, never only timed"

    @test
    def progress_says_where_it_is_and_what_is_left():
        parts = [plan.Part("a", "part a", seconds=60), plan.Part("b", "part b", seconds=120),
                 plan.Part("c", "part c", seconds=60)]
        now = [0.0]
        lines = []
        progress = plan.Progress(parts, lines.append, clock=lambda: now[0])
        progress.start("quick")
        assert "3 parts, about 4 min on an H100" in lines[0], lines
        progress.begin(parts[0])
        assert lines[-1] == "[1/3] part a ... elapsed 0s, about 4 min left", lines[-1]
        now[0] = 120.0  # part a took twice its estimate: what is left is scaled by 2
        progress.begin(parts[1])
        assert lines[-1] == "[2/3] part b ... elapsed 2m00s, about 6 min left", lines[-1]
        now[0] = 150.0
        progress.begin(parts[2])
        assert lines[-1] == "[3/3] part c ... elapsed 2m30s, about 50 s left", lines[-1]
        now[0] = 200.0
        assert progress.finish() == 200.0 and "done in 3m20s (estimated 4m00s)" in lines[-1], lines[-1]
        assert [plan.clock_text(t) for t in (5, 65, 3700)] == ["5s", "1m05s", "1h01m"]

    @test
    def heat_bench_quick_checks_small_and_times_large():
        jobs = heat_bench.jobs("128,256,512", 10, quick=True, overhead_reps=20)
        runs = [o for part, _, o in jobs if part == "runs"]
        assert len(runs) == 24 and [o[1] for o in runs[:2]] == ["128", "512"] and "--time-only" in runs[1], runs[:2]
        assert [part for part, _, _ in jobs].count("snapshots") == 0
        float_accuracy = [o for part, _, o in jobs if part == "accuracy" and "float" in o][0]
        assert "--snapshots" in float_accuracy, float_accuracy
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            program = fake_heat_program(tmp)
            heat, printed = quietly(heat_bench.measure, program, "128,256,512", 10, tmp, True, 20)
        late = [r for r in heat["runs"] if r["n"] == 512]
        assert late and all(r["checked_at"] == [128] and r["check"]["checked"] is False for r in late), late[:1]
        # the fake's (periodic, bf16) fails its check at 128: its run at 512 is skipped
        assert ("periodic", "bf16") not in {(r["bc"], r["precision"]) for r in late}
        assert "skipped: the check of periodic, bf16 did not pass" in printed, printed
        assert heat["snapshots"] is not None and heat["snapshots"]["n"] == 128
        assert not any(r.get("snapshots") for r in heat["accuracy"]), "the pictures stay in heat.snapshots only"
        doc = fixture()
        doc["heat"] = {**heat, "fused": doc["heat"]["fused"]}
        validate(doc)
        fused = heat_bench.fused_jobs(10, quick=True)
        assert [o[o.index("--n") + 1] for _, _, o in fused[:2]] == ["128", "256,512"], fused[:2]
        assert "--check-only" in fused[0][2] and "--time-only" in fused[1][2]


# What every stand-in program of the sweep does first: log its arguments, read its record template.
STAND_IN_HEAD = """#!{python}
import json, os, sys
args = sys.argv[1:]
with open({log!r}, "a") as f:
    f.write(json.dumps(args) + "\\n")
opt = lambda name: args[args.index(name) + 1]
t = json.loads({template!r})
"""
FAKE_SWEEP = STAND_IN_HEAD + """with open(opt("--json"), "a") as out:
    for n in opt("--n").split(","):
        r = dict(t, device="FAKE GPU", stage={stage!r}, n=int(n))
        r["check"] = {{"ok": True}} if "--check-only" in args else {{"checked": False}}
        out.write(json.dumps(r) + "\\n")
"""


# Stage 07 or 08 for the sweep: --check-only writes checked records (half periodic fails, exit 1),
# --time-only writes unchecked ones; this stage 08 refuses periodic (exit 2) and is twice as fast.
FAKE_SWEEP_HEAT = STAND_IN_HEAD + """stage, bc, precision = {stage!r}, opt("--bc"), opt("--precision")
if stage.startswith("08") and bc == "periodic":
    print("--bc periodic: stage 08 runs dirichlet and neumann boundaries only", file=sys.stderr)
    sys.exit(2)
fail = "--check-only" in args and (bc, precision) == ("periodic", "half")
with open(opt("--json"), "a") as out:
    for n in opt("--n").split(","):
        r = dict(t, device="FAKE GPU", stage=stage, n=int(n), bc=bc, precision=precision,
                 fused_steps=int(opt("--fuse")) if "--fuse" in args else 1)
        r["check"] = {{"ok": not fail, "max_err": 1e-7}}
        if "--time-only" in args:
            r["checked"] = False
        if stage.startswith("08"):  # 2x stage 07; 2.25x at S = 3 + n % 4, so the best S changes with N
            r["updates_per_s"] *= 2.25 if int(opt("--fuse")) == 3 + int(n) % 4 else 2
        out.write(json.dumps(r) + "\\n")
sys.exit(1 if fail else 0)
"""


# Stage 10 for the sweep: a record per order and N; --check-only fails (exit 1) while the file
# `fail` exists. % of copy: 50% at N = 255, 80% elsewhere.
FAKE_SWEEP_ORDER = STAND_IN_HEAD + """fail = "--check-only" in args and os.path.exists({fail!r})
with open(opt("--json"), "a") as out:
    for R in opt("--order").split(","):
        for n in opt("--n").split(","):
            r = dict(t, device="FAKE GPU", stage="10_high_order", n=int(n), order=int(R), kernel="fast",
                     tile={{"in_tile_dim": 0, "out_tile_dim": 0, "z_coarsening": 16}},
                     fraction_of_copy=0.5 if n == "255" else 0.8)
            r["check"] = {{"ok": not fail}} if "--check-only" in args else {{"checked": False}}
            out.write(json.dumps(r) + "\\n")
sys.exit(1 if fail else 0)
"""


GROUPS = {  # one Meson test each, so that no one of them nears its timeout on a slow machine
    "data": [schema_tests, sweep_tests, bench_tests, high_order_tests],
    "figures": [plot_tests],
    "heat-figures": [heat_plot_tests],
}
NEEDS_MATPLOTLIB = {"figures", "heat-figures"}


def main(argv):
    groups = argv or list(GROUPS)
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        print(f"test_plots.py: no test group {', '.join(unknown)} (the groups: {', '.join(GROUPS)})")
        return 2
    skipped = None  # the first group that needs matplotlib where it is missing: it and the rest are not run
    for group in groups:
        if group in NEEDS_MATPLOTLIB and importlib.util.find_spec("matplotlib") is None:
            skipped = group
            break
        for tests in GROUPS[group]:
            tests()
    if failures:
        print(f"{len(failures)} test(s) failed: {', '.join(failures)}")
        return 1
    if skipped:
        print(f"SKIP: matplotlib is not installed, so the {skipped} group can draw nothing "
              "(python3 -m pip install -r requirements.txt)")
        return 77
    print(f"all plot tests passed ({', '.join(groups)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
