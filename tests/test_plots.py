#!/usr/bin/env python3
"""Tests for plots/plot.py and plots/results_schema.py (no GPU needed).

    python3 tests/test_plots.py

Exit status 0: all passed; 1: a test failed; 77: matplotlib is missing (SKIP; the schema
tests still run first, and a failure there is still a failure).

What is tested:
- the schema validator accepts tests/fixtures/results_small.json and rejects each kind of
  malformed file with a message that names the bad field;
- plot.py exits 2 with one line "plot.py: <file>: <what is wrong>" for a missing, empty, invalid
  or malformed results file;
- the fixture draws all five figures, each a real PNG of a reasonable size;
- without convergence data it draws four and says why; without profiles opb.png is still drawn;
- every results file shipped in plots/results/ validates.
"""
import copy
import json
import math
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

sys.path.insert(0, str(PLOTS))
from results_schema import ResultsError, load_results, validate  # noqa: E402

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

    @test
    def validator_rejects_each_mutation():
        for mutate in MUTATIONS:
            doc = fixture()
            expected = mutate(doc)
            rejects(doc, expected)
        rejects([], "the file holds a list, expected one JSON object")

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
        shipped = sorted((PLOTS / "results").glob("*.json")) if (PLOTS / "results").is_dir() else []
        for path in shipped:
            load_results(path)
        print(f"      ({len(shipped)} shipped results file(s) in plots/results/)")


def plot_tests():
    import plot  # plots/plot.py; needs matplotlib

    @test
    def fixture_draws_all_five_figures():
        with tempfile.TemporaryDirectory() as out:
            p = run_plot(FIXTURE, out)
            assert p.returncode == 0, f"exit status {p.returncode}\n{p.stdout}\n{p.stderr}"
            printed = [Path(line) for line in p.stdout.splitlines() if line.endswith(".png")]
            assert [q.name for q in printed] == FIGURES, f"printed {p.stdout!r}"
            for name in FIGURES:
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
            for mutate in (_wrong_schema, _drop_time, _text_median, _no_baseline):
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
            assert [p.name for p in written] == FIGURES, written
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
            assert len(written) == 4
            for p in written:
                check_png(p)
        assert any(f"runs[{i}]" in n and "failed its check" in n for n in notes), notes

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


def main():
    schema_tests()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if failures:
            print(f"{len(failures)} test(s) failed: {', '.join(failures)}")
            return 1
        print("SKIP: matplotlib is not installed, so no figure can be drawn "
              "(python3 -m pip install -r requirements.txt); the schema tests passed")
        return 77
    plot_tests()
    if failures:
        print(f"{len(failures)} test(s) failed: {', '.join(failures)}")
        return 1
    print("all plot tests passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
