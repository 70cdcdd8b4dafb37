#!/usr/bin/env python3
"""The learner's tools in course.py: hint, reset, watch's change detection and progress's timing
line. They run in a temporary git repository that holds a copy of course.py and small stand-in
stages (the learner's own chapters/ may be half done), so nothing is built and no GPU is needed.
Also checks that every shipped HINTS.md of stages 01-06 has 3 to 5 hints.

usage: test_course_tools.py REPO_ROOT"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # importing course.py must not write __pycache__ into the sources
SOURCE = Path(sys.argv[1]).resolve()
SHIPPED = ["01_discretization", "02_basic_sweep", "03_shared_tiling", "04_thread_coarsening",
           "05_register_tiling", "06_roofline"]
STAND_INS = ["02_basic_sweep", "03_shared_tiling", "07_heat_equation"]  # 07 has no HINTS.md
SKELETON = ("// {stage}: a stand-in skeleton\n"
            "// I AM NOT DONE: delete the next line when you start on this exercise.\n"
            "#define I_AM_NOT_DONE\n"
            "int answer = 0;  // the exercise\n")
HINTS = ("# Hints\n\nA preamble, not a hint.\n\n## Hint 1\n\nfirst nudge\n\n## Hint 2\n\nsecond, closer\n\n"
         "## Hint 3\n\nthird, nearly the answer\n")
# The environment of every git and course.py run: no GIT_DIR and the like from outside, and an author.
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
ENV.update(GIT_AUTHOR_NAME="learner", GIT_AUTHOR_EMAIL="learner@example.com",
           GIT_COMMITTER_NAME="learner", GIT_COMMITTER_EMAIL="learner@example.com")

failures = []
checked = 0


def check(condition, what, output=""):
    global checked
    checked += 1
    if not condition:
        failures.append(what + (f"; the output was:\n{output}" if output else ""))


def git(repo, *args):
    return subprocess.run(["git", "-c", "commit.gpgsign=false", *args], cwd=repo, env=ENV,
                          capture_output=True, text=True, check=True).stdout


def course(repo, *args, stdin=None):
    """Runs the copy of course.py in `repo`; stdin None means a closed stdin. (exit code, output)."""
    run = subprocess.run([sys.executable, str(repo / "course.py"), *args], env=ENV, capture_output=True,
                         text=True, timeout=120, **({"input": stdin} if stdin is not None else
                                                    {"stdin": subprocess.DEVNULL}))
    return run.returncode, run.stdout + run.stderr


def load_course(repo):
    """course.py as a module, with its ROOT at `repo` (the file's own folder)."""
    spec = importlib.util.spec_from_file_location(f"course_{len(str(repo))}_{id(repo)}", repo / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_repo(path):
    """A course as shipped: course.py, .gitignore and the stand-in stages, in one commit."""
    path.mkdir()
    for name in ("course.py", ".gitignore"):
        shutil.copy(SOURCE / name, path / name)
    for stage in STAND_INS:
        folder = path / "chapters" / stage
        folder.mkdir(parents=True)
        (folder / "stencil.cu").write_text(SKELETON.format(stage=stage))
        if stage != "07_heat_equation":
            (folder / "HINTS.md").write_text(HINTS)
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "the course as shipped")
    return path


def skeleton(stage):
    return SKELETON.format(stage=stage).encode()


def error_of(course_module, function, *args):
    """The message of the CourseError that function(*args) raises, or 'no error'."""
    try:
        function(*args)
    except course_module.CourseError as e:
        return str(e)
    return "no error"


def text_of(path):
    """A file's text, or None when it is missing (a check then fails instead of the test crashing)."""
    return path.read_text() if path.exists() else None


def test_hints(repo):
    texts = ["first nudge", "second, closer", "third, nearly the answer"]
    for number, text in enumerate(texts):
        code, out = course(repo, "hint", "02")
        check(code == 0 and text in out and all(t not in out for t in texts if t != text),
              f"hint call {number + 1} should show hint {number + 1} only", out)
    code, out = course(repo, "hint", "basic_sweep")
    check(code == 0 and "were shown" in out and texts[2] in out and texts[1] not in out,
          "after the last hint, a fourth call says so and repeats the last one", out)
    code, out = course(repo, "hint", "03_shared_tiling")
    check(code == 0 and texts[0] in out and texts[1] not in out, "each stage counts its own hints", out)
    code, out = course(repo, "hint", "03", "--all")
    check(code == 0 and all(t in out for t in texts) and "preamble" not in out,
          "--all prints every hint and not the preamble", out)

    state = repo / "build" / "course-state.json"
    check(state.exists() and json.loads(state.read_text())["hints_shown"] == {"02_basic_sweep": 3,
                                                                              "03_shared_tiling": 3},
          "the state file is build/course-state.json and counts 3 hints shown for 02 and 03")
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    check(status == "", "hint changes nothing that git sees (the state lives in the ignored build/)", status)

    code, out = course(repo, "hint", "07")
    check(code == 1 and "stage 07 has no hints yet" in out and "Traceback" not in out,
          "a stage without HINTS.md says 'stage 07 has no hints yet'", out)
    hints_file = repo / "chapters" / "03_shared_tiling" / "HINTS.md"
    hints_file.write_text("# Hints\n\nNothing here yet.\n")
    code, out = course(repo, "hint", "03")
    check(code == 1 and "chapters/03_shared_tiling/HINTS.md" in out and "no hints" in out and "Traceback" not in out,
          "a HINTS.md without hints is an error that names the file", out)
    git(repo, "checkout", "--", str(hints_file))


def test_parse_strictly(repo):
    course_module = load_course(repo)
    cases = {"## Hint 1\n\none\n\n## Hint 3\n\nthree\n": "HINTS.md:5: expected '## Hint 2'",
             "## Hint 1\n\none\n\n## hint 2\n\ntwo\n": "expected '## Hint 2'",
             "## Hint 1\n\n## Hint 2\n\ntwo\n": "hint 1 is empty",
             "## Hint 1\n\none\n\n## Notes\n\nmore\n": "found '## Notes'"}
    path = repo / "chapters" / "02_basic_sweep" / "HINTS.md"
    for text, message in cases.items():
        path.write_text(text)
        error = error_of(course_module, course_module.parse_hints, path)
        check(message in error and "chapters/02_basic_sweep/HINTS.md" in error,
              f"parse_hints of {text!r} should fail with '{message}', got '{error}'")
    git(repo, "checkout", "--", str(path))


def test_shipped_hints():
    course_module = load_course(SOURCE)
    with_hints = {p.parent.name for p in (SOURCE / "chapters").glob("*/HINTS.md")}
    for stage in sorted(with_hints | set(SHIPPED)):
        error = error_of(course_module, course_module.stage_hints, stage)
        count = len(course_module.stage_hints(stage)) if error == "no error" else 0
        check(3 <= count <= 5, f"chapters/{stage}/HINTS.md should parse to 3 to 5 hints, got {count} ({error})")


def test_unknown_stage(repo):
    for command in ("hint", "reset", "watch"):
        code, out = course(repo, command, "99")
        check(code == 2 and "unknown stage '99'" in out and ", ".join(STAND_INS) in out,
              f"'{command} 99' exits 2 and lists the stages", out)


def test_reset(repo):
    folder = repo / "chapters" / "02_basic_sweep"
    exercise = folder / "stencil.cu"
    code, out = course(repo, "reset", "02")
    check(code == 0 and "nothing to do" in out and not list(folder.glob("*.bak*")),
          "reset of an untouched stage does nothing and says so", out)

    exercise.write_text("// my first try, not committed\n")
    code, out = course(repo, "reset", "02")
    check(code == 0 and exercise.read_bytes() == skeleton("02_basic_sweep"),
          "reset restores the skeleton byte for byte", out)
    check(text_of(folder / "stencil.cu.bak") == "// my first try, not committed\n",
          "reset keeps the learner's file as stencil.cu.bak")

    exercise.write_text("// my second try, committed\n")
    git(repo, "commit", "-q", "-am", "my work")
    code, out = course(repo, "reset", "02")
    check(code == 0 and exercise.read_bytes() == skeleton("02_basic_sweep"),
          "reset restores the skeleton after the learner committed their edits", out)
    check(text_of(folder / "stencil.cu.bak.1") == "// my second try, committed\n"
          and text_of(folder / "stencil.cu.bak") == "// my first try, not committed\n",
          "a second reset keeps the first backup and writes stencil.cu.bak.1")
    status = git(repo, "status", "--porcelain", "--untracked-files=all")
    check(".bak" not in status, "git ignores the backups", status)

    other = repo / "chapters" / "03_shared_tiling" / "stencil.cu"
    other.write_text("// work in progress\n")
    for answer, why in (("n\n", "'n'"), (None, "a closed stdin")):
        code, out = course(repo, "reset", "--all", stdin=answer)
        check(code == 1 and "nothing was reset" in out and text_of(other) == "// work in progress\n"
              and not list(other.parent.glob("*.bak*")), f"reset --all with {why} changes nothing", out)
    code, out = course(repo, "reset", "--all", stdin="yes\n")
    check(code == 0 and other.read_bytes() == skeleton("03_shared_tiling")
          and (other.parent / "stencil.cu.bak").exists(), "reset --all with 'yes' resets every stage", out)


def test_reset_in_clone(repo, clone):
    """A learner who committed half-done work with the marker still in: in a clone, the fork
    point from upstream tells the shipped skeleton from theirs."""
    git(repo.parent, "clone", "-q", str(repo), str(clone))
    exercise = clone / "chapters" / "02_basic_sweep" / "stencil.cu"
    exercise.write_text(SKELETON.format(stage="02_basic_sweep") + "int half_done = 1;\n")
    git(clone, "commit", "-q", "-am", "half done, marker still in")
    code, out = course(clone, "reset", "02")
    check(code == 0 and exercise.read_bytes() == skeleton("02_basic_sweep"),
          "in a clone, reset skips the learner's commits even when they kept the marker", out)


def test_change_detection(repo):
    course_module = load_course(repo)
    path = repo / "watched.cu"
    path.write_text("int a = 1;\n")
    before = course_module.file_snapshot(path)
    changed, now = course_module.file_changed(path, before)
    check(not changed and now == before, "no edit, no change")
    status = path.stat()
    path.write_text("int a = 2;\n")  # same size; the same mtime too, as within one tick of the clock
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns))
    changed, now = course_module.file_changed(path, before)
    check(changed, "an edit of the same size within the same mtime is a change (the content hash)")
    changed, again = course_module.file_changed(path, now)
    check(not changed, "no change after the edit was seen")
    path.unlink()
    changed, gone = course_module.file_changed(path, again)
    check(changed and gone is None, "a deleted file is a change, with no snapshot")


def fake_program(path, median):
    """A stand-in stage program that appends a record with time_ms.median to its --json file."""
    path.write_text(f"#!{sys.executable}\n"
                    "import json, sys\n"
                    "a = sys.argv\n"
                    "assert a[a.index('--n') + 1] == '256' and a[a.index('--reps') + 1] == '10'\n"
                    "with open(a[a.index('--json') + 1], 'a') as f:\n"
                    f"    f.write(json.dumps({{'time_ms': {{'median': {median}, 'min': 0.1}}}}) + '\\n')\n")
    path.chmod(0o755)


def test_timing(repo):
    course_module = load_course(repo)
    course_module.BUILD = repo / "fake_build"  # where program() finds the stage programs
    course_module.BUILD.mkdir()
    fake_program(course_module.program("02_basic_sweep", "exercise"), 0.5)
    fake_program(course_module.program("02_basic_sweep", "solution"), 0.25)
    text = course_module.timing("02_basic_sweep")
    check(text == "0.500 ms vs solution 0.250 ms (2.0x slower)", f"progress's timing column for 02 is '{text}'")
    text = course_module.timing("01_discretization")
    check(text.startswith("(not timed: stage 01"), f"stage 01 is not timed, and says why: '{text}'")

    failing = course_module.program("02_basic_sweep", "solution")
    failing.write_text("#!/bin/sh\nexit 1\n")
    error = error_of(course_module, course_module.median_ms, failing)
    check("exited with 1" in error, f"a failed timing run is an error that says so, got '{error}'")
    text = course_module.timing("02_basic_sweep")
    check(text.startswith("(not timed: ") and "exited with 1" in text, f"a failed run shows as '{text}'")
    text = course_module.timing_text(0.61, 0.38)
    check(text == "0.610 ms vs solution 0.380 ms (1.6x slower)", f"timing_text(0.61, 0.38) is '{text}'")
    check("(1.6x faster)" in course_module.timing_text(0.38, 0.61), "a faster exercise is 'faster'")
    check("(about the same)" in course_module.timing_text(1.0, 1.02), "within 5% is 'about the same'")


def in_child(repo, code):
    """Runs `code` in a Python process that has the copy of course.py in `repo` loaded as
    `course`, with its build folder at repo/fake_build (so that a stage program's output and
    course.py's lines arrive in the order a learner sees them). (exit code, output)."""
    script = repo / "child.py"
    script.write_text("import sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, sys.argv[1])\n"
                      "import course\nfrom pathlib import Path\ncourse.BUILD = Path(sys.argv[1]) / 'fake_build'\n"
                      "real_configure, real_build = course.configure, course.build\n"
                      "course.build = course.configure = lambda: None\n" + code)
    run = subprocess.run([sys.executable, str(script), str(repo)], env=ENV, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    script.unlink()
    return run.returncode, run.stdout + run.stderr


def stand_in_program(path, code, text):
    """A stage program that prints `text` and exits with `code`, whatever its arguments."""
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!{sys.executable}\nimport sys\nprint({text!r})\nsys.exit({code})\n")
    path.chmod(0o755)


NO_GPU = "no CUDA GPU is available (no NVIDIA driver is loaded, or it is older than this CUDA runtime needs)"


def test_no_gpu(repo):
    """Without a GPU: progress lists every stage, run and watch say that the file compiled."""
    build = repo / "fake_build"
    # 02 attempted (its program skips for want of a GPU), 03 and 07 not attempted.
    stand_in_program(build / "stage_02_basic_sweep_exercise", 77, "SKIP: " + NO_GPU)
    for stage in ("03_shared_tiling", "07_heat_equation"):
        stand_in_program(build / f"stage_{stage}_exercise", 77,
                         f"SKIP: exercise {stage} is not attempted yet. Read chapters/{stage}/README.md")
    code, out = in_child(repo, "course.cmd_progress([])")
    lines = out.splitlines()
    check(code == 0 and any("02_basic_sweep" in l and "builds; can't check: no GPU" in l for l in lines)
          and any("03_shared_tiling" in l and "not attempted" in l for l in lines)
          and any("07_heat_equation" in l and "not attempted" in l for l in lines)
          and "only a GPU can check them" in out and NO_GPU in out and "every exercise passes" not in out,
          "progress without a GPU lists every stage, the attempted one as 'builds; can't check: no GPU'", out)

    stand_in_program(build / "stage_02_basic_sweep_exercise", 3, NO_GPU)
    code, out = in_child(repo, "course.gpu_count = lambda: 0\ncourse.cmd_run(['02', '--n', '3,17,100'])")
    first = out.find("chapters/02_basic_sweep/stencil.cu compiled")
    check(code == 3 and 0 <= first < out.find(NO_GPU),
          "run without a GPU says first that the file compiled, then the program says there is no GPU", out)

    stand_in_program(build / "stage_02_basic_sweep_exercise", 77, "SKIP: " + NO_GPU)
    code, out = in_child(repo, "course.build_target = lambda name: 0\ncourse.build_and_check('02_basic_sweep')")
    check(code == 0 and "chapters/02_basic_sweep/stencil.cu compiled, but there is no GPU here" in out
          and NO_GPU in out, "watch without a GPU says that the file compiled", out)


def test_skip_reasons(repo):
    """test: one line per reason for the skipped tests, from Meson's JSON log."""
    course_module = load_course(repo)
    log = repo / "testlog.json"
    records = [{"name": "unit - a", "result": "OK", "stdout": "all checks passed\n"}]
    records += [{"name": f"gpu - {n}", "result": "SKIP", "stdout": f"SKIP: {NO_GPU}\n"} for n in range(5)]
    records += [{"name": f"exercise - {stage}", "result": "SKIP",
                 "stdout": f"probe\nSKIP: exercise {stage} is not attempted yet. Read chapters/{stage}/README.md\n"}
                for stage in ("02_basic_sweep", "02_basic_sweep", "03_shared_tiling")]
    records += [{"name": "quiet", "result": "SKIP", "stdout": ""}]
    records += [{"name": "gpu - other", "result": "SKIP",
                 "stdout": "SKIP: no CUDA GPU is available (CUDA driver version is insufficient)\n"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records) + "not json\n")
    reasons = course_module.skip_reasons(log)
    gpu = [(r, n) for r, n in reasons.items() if r.startswith("no CUDA GPU is available")]
    check(len(gpu) == 1 and gpu[0][1] == 6 and "no NVIDIA driver is loaded" in gpu[0][0]
          and "CUDA driver version is insufficient" in gpu[0][0],
          f"6 tests skipped for want of a GPU, in one line with both details, got {reasons}")
    unattempted = [(r, n) for r, n in reasons.items() if r.startswith("exercises not attempted yet")]
    check(len(unattempted) == 1 and unattempted[0][1] == 3 and "02, 03" in unattempted[0][0],
          f"3 exercise tests not attempted, in one line naming stages 02 and 03, got {reasons}")
    check(sum(reasons.values()) == 10 and any(r.startswith("no reason printed") for r in reasons),
          f"a test that printed no reason still counts, got {reasons}")


def test_suite_names(repo):
    """test --suite with a suite that does not exist: exit 2 naming the suites (meson test would
    say 'No suitable tests defined.' and exit 0)."""
    code, out = in_child(repo, "course.test_suites = lambda: (['exercise', 'gpu', 'unit'], ['pmpp-stencil'])\n"
                               "for args in (['--suite', 'unit'], ['--suite=pmpp-stencil:gpu'], ['--no-suite', 'gpu'], []):\n"
                               "    course.check_suites(args)\n"
                               "print('all accepted')\n"
                               "course.check_suites(['--suite', 'unit', '--suite', 'nosuch'])\n")
    check(code == 2 and "all accepted" in out and "no test suite 'nosuch'" in out and "exercise, gpu, unit" in out,
          "an unknown suite exits 2 and names the suites; known ones pass", out)


def test_bench_options_first(repo):
    """bench --help and a wrong option answer before the build, which takes minutes on a fresh machine."""
    code, out = in_child(repo, f"sys.path.insert(0, {str(SOURCE / 'plots')!r})\n"
                               "course.build = lambda: print('BUILT')\n"
                               "for args in (['--help'], ['--n', '1x'], ['--no-such-option']):\n"
                               "    try:\n"
                               "        course.cmd_bench(args)\n"
                               "    except SystemExit as e:\n"
                               "        print('exit', e.code)\n")
    check("BUILT" not in out and "usage: course.py bench" in out and "exit 0" in out
          and out.count("exit 2") == 2 and "--n expects sizes" in out and "unrecognized arguments" in out,
          "bench --help exits 0 and wrong options exit 2, each before anything is built", out)


def test_backend(repo):
    """The build names its backend, so that no command prints 'INFO: autodetecting backend as
    ninja': setup gets --backend ninja, and the build runs ninja itself, not `meson compile`.
    With a GPU here, setup builds for it alone (-Dgpu_arch=Auto); without one, for the default list."""
    code, out = in_child(repo, "calls, ran = [], []\ncourse.configure = real_configure\n"
                               "course.meson = lambda *a, **k: calls.append(list(a)) or 0\n"
                               "course.ensure_tools = lambda: None\n"
                               "course.BUILD = Path(sys.argv[1]) / 'no_build_yet'\n"
                               "import subprocess\n"
                               "subprocess.run = lambda cmd, **k: ran.append(cmd) or subprocess.CompletedProcess(cmd, 0)\n"
                               "for gpus in (0, 1):\n"
                               "    course.gpu_count = lambda: gpus\n"
                               "    real_build()\n"
                               "    print('gpus', gpus, 'meson', calls[-1])\n"
                               "print('ran', ran)\n")
    check(code == 0 and "'setup', '--backend', 'ninja'" in out and "'compile'" not in out
          and "ran [['ninja', '-C'," in out, "setup names the backend and the build runs ninja", out)
    check("gpus 0 meson ['setup', '--backend', 'ninja', '" in out
          and "gpus 1 meson ['setup', '--backend', 'ninja', '-Dgpu_arch=Auto', " in out,
          "setup builds for this machine's GPU alone where there is one, else for the default list", out)


def main():
    if not shutil.which("git"):
        print("SKIP: git is not installed; reset needs it")
        return 77
    test_shipped_hints()
    with tempfile.TemporaryDirectory() as tmp:
        for test in (test_hints, test_parse_strictly, test_unknown_stage, test_reset, test_change_detection,
                     test_timing, test_no_gpu, test_skip_reasons, test_suite_names, test_bench_options_first,
                     test_backend):
            test(make_repo(Path(tmp) / test.__name__))
        test_reset_in_clone(make_repo(Path(tmp) / "upstream"), Path(tmp) / "clone")
    for f in failures:
        print(f"FAIL: {f}")
    print(f"{checked - len(failures)} of {checked} checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
