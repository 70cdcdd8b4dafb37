#!/usr/bin/env python3
"""The course's one entry point.

  python3 course.py bench [--full]     benchmark every stage and draw the plots (about 3.5 min on an
                                       H100); --full: the slower measurement of the shipped results
  python3 course.py bench --sweep      stages 02 and 06 at every N from 64 to 1024, 07 and 08 from 256,
                                       10 from 255: % of copy (and 08's speed-up over 07) against N
  python3 course.py bench --only-08    stage 08 against stage 07 again, into this GPU's results file
  python3 course.py bench --only-heat  stages 07 and 08 again, into this GPU's results file
  python3 course.py bench --only-10    stage 10 (and CuPy/PyTorch of order R) again, into that file
  python3 course.py bench --sweep --only-heat
                                       the sweep's stages 07 and 08 again, into this GPU's sweep file
  python3 course.py bench --sweep --only-10
                                       the sweep's stage 10 (every order, N = 255..1026) again, likewise
  python3 course.py test [ARGS]        build, then run the tests (ARGS go to meson test)
  python3 course.py progress           which exercises are not attempted, failing or passing; for
                                       a passing one, its time at N = 256 against the solution's
  python3 course.py run STAGE [--solution] [OPTIONS]
                                       run one stage, e.g. `run 02 --n 3,17,100`; OPTIONS: `run 02 --help`
  python3 course.py hint STAGE [--all] the stage's next hint (from chapters/NN_name/HINTS.md), or all
  python3 course.py reset STAGE|--all  put the skeleton back as shipped; your file is kept as .bak
  python3 course.py watch STAGE        rebuild and check the exercise each time its file is saved

STAGE is a number (02), a folder name (02_basic_sweep) or a name (basic_sweep). The hints shown
so far are counted in build/course-state.json.
"""
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
BUILD = ROOT / "build"
STATE = BUILD / "course-state.json"  # hints shown per stage; build/ is git-ignored, never the sources
EXERCISE_SIZES = "3,4,5,7,8,9,14,17,32,33,100,512"  # as tests/meson.build
TIMING_N, TIMING_REPS = 256, 10  # one short timed run per program in `progress`
# Stages whose program checks the kernel but reports no time (stage 01's --json is its study).
NOT_TIMED = {"01_discretization": "stage 01 checks its kernel but does not time it"}
# The time-stepping stages time one step ("step_ms"); a few steps keep their check short.
# Stage 08 is timed per step of a loop of passes that fuse 4 steps each.
TIMING_EXTRA = {"07_heat_equation": ["--steps", "10"], "08_temporal_blocking": ["--fuse", "4", "--steps", "8"],
                "09_many_gpus": ["--steps", "10"]}
# How `progress` checks an exercise, as tests/meson.build does: one run, or for the time-stepping
# stages one run per boundary condition, for stage 10 every order.
EXERCISE_RUNS = {"07_heat_equation": [["--n", "3,5,17,33,64", "--steps", "3", "--bc", bc]
                                      for bc in ("dirichlet", "neumann", "periodic")],
                 "08_temporal_blocking": [["--n", "3,5,17,33,64", "--fuse", "4", "--steps", "7", "--bc", bc]
                                          for bc in ("dirichlet", "neumann", "periodic")],
                 "09_many_gpus": [["--n", "3,5,17,64", "--steps", "3", "--bc", bc]
                                  for bc in ("dirichlet", "neumann", "periodic")],
                 "10_high_order": [["--n", "3,5,8,17,33,100", "--order", "1,2,3,4"]]}


def say(text):
    print(text, flush=True)


def fail(text, code=1):
    print(f"course.py: {text}", file=sys.stderr)
    sys.exit(code)


class CourseError(Exception):
    """A problem that a message explains (a malformed HINTS.md, no git history): no traceback."""


def rel(path):
    """The path from the course's root (as given where it lies elsewhere)."""
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- tools

def requirements():
    """(name, minimum version) from requirements.txt."""
    pairs = []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition(">=")
            pairs.append((name.strip(), version.strip()))
    return pairs


def version_tuple(text):
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def installed_version(name):
    """The version of a requirement that is usable here, or None."""
    if name == "ninja":
        exe = shutil.which("ninja")
        if exe:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
            return out.strip() or None
        return None
    module = {"meson": "mesonbuild"}.get(name, name)
    if importlib.util.find_spec(module) is None:
        return None
    if name == "meson":
        from mesonbuild import coredata
        return coredata.version
    return getattr(__import__(module), "__version__", "0")


def ensure_tools():
    """Installs (with pip) only the requirements that are missing or too old."""
    missing = [f"{n}>={v}" for n, v in requirements()
               if (have := installed_version(n)) is None or version_tuple(have) < version_tuple(v)]
    if missing:
        say(f"installing what is missing: {' '.join(missing)}")
        cmd = [sys.executable, "-m", "pip", "install", "--quiet", *missing]
        if subprocess.run(cmd).returncode != 0:
            fail(f"could not install {' '.join(missing)} with pip. If pip refused because this Python is "
                 f"managed by the system, use a virtual environment: python3 -m venv .venv && "
                 f". .venv/bin/activate && python3 course.py {' '.join(sys.argv[1:])}")
        importlib.invalidate_caches()
    if not shutil.which("ninja"):  # pip's ninja puts its binary beside the package
        import ninja
        os.environ["PATH"] = ninja.BIN_DIR + os.pathsep + os.environ["PATH"]
    if not shutil.which("nvcc") and not Path("/usr/local/cuda/bin/nvcc").exists():
        fail("nvcc not found: install the CUDA Toolkit (12.0 or newer) and put its bin folder on PATH")
    if not shutil.which("nvcc"):
        os.environ["PATH"] = "/usr/local/cuda/bin" + os.pathsep + os.environ["PATH"]


def meson(*args, check=True):
    run = subprocess.run([sys.executable, "-m", "mesonbuild.mesonmain", *args], cwd=ROOT)
    if check and run.returncode != 0:
        fail(f"meson {args[0]} failed (exit {run.returncode})", run.returncode)
    return run.returncode


def configure():
    ensure_tools()
    if not (BUILD / "build.ninja").exists():
        # With a GPU here, build for it alone (Meson asks it for its compute capability): one
        # architecture instead of meson.options' three, so the first build takes a third as long.
        arch = ["-Dgpu_arch=Auto"] if gpu_count() > 0 else []
        meson("setup", "--backend", "ninja", *arch, str(BUILD))


def build_target(name):
    """Builds one target; ninja's exit code. (On Ctrl-C ninja stops with one line.)"""
    return subprocess.run(["ninja", "-C", str(BUILD), name], cwd=ROOT).returncode


def build():
    """Builds everything with ninja, the backend `configure` names: `meson compile` would run the
    same ninja but first print 'INFO: autodetecting backend as ninja' on every command."""
    configure()
    run = subprocess.run(["ninja", "-C", str(BUILD)], cwd=ROOT)
    if run.returncode != 0:
        fail(f"the build failed (ninja exit {run.returncode}): the compiler's message is above", run.returncode)


# ---------------------------------------------------------------- stages

def stages():
    """The stage folders in chapters/, in order: ['01_discretization', '02_basic_sweep', ...]."""
    return sorted(p.name for p in (ROOT / "chapters").iterdir() if p.is_dir() and re.match(r"\d\d_", p.name))


def find_stage(text):
    matches = [s for s in stages() if s == text or s.startswith(text.zfill(2) + "_") or s.split("_", 1)[1] == text]
    if len(matches) != 1:
        fail(f"unknown stage '{text}'; the stages are: {', '.join(stages())}", 2)
    return matches[0]


def program(stage, implementation):
    return BUILD / f"stage_{stage}_{implementation}"


def exercise_file(stage):
    return ROOT / "chapters" / stage / "stencil.cu"


def source_file(stage, implementation):
    return exercise_file(stage) if implementation == "exercise" else ROOT / "solutions" / stage / "stencil.cu"


# Stages that need a library besides CUDA: without it Meson does not build them (see meson.build).
NEEDS = {"09_many_gpus": "NCCL built for your CUDA (the CUDA toolkit's libnccl, Debian's libnccl-dev, or pip "
                         "install nvidia-nccl-cu12 for CUDA 12, nvidia-nccl-cu13 for CUDA 13), then "
                         "`meson setup --reconfigure build`"}
MANY_GPUS = "09_many_gpus"


def not_built(stage, implementation="exercise"):
    """Why the stage's program is missing, or None when it exists."""
    if program(stage, implementation).exists():
        return None
    return f"{program(stage, implementation).name} was not built" + (
        f": stage {stage[:2]} needs {NEEDS[stage]}" if stage in NEEDS else "")


def gpu_count():
    """The GPUs nvidia-smi lists (0 without it)."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def many_gpu_arguments(rest):
    """Stage 09 on every GPU here: --gpus G added (one process) unless the options say how many;
    says what it does, and says so when there is only one GPU."""
    if "--gpus" in rest or any(a.startswith("--gpus=") for a in rest) or "--help" in rest:
        return rest
    count = gpu_count()
    if count > 1:
        say(f"course.py: {count} GPUs here: stage 09 runs on all of them from one process (--gpus {count}); "
            f"for one process per GPU: mpirun -np {count} {rel(program(MANY_GPUS, 'solution'))} ...")
        return ["--gpus", str(count), *rest]
    if count == 1:
        say("course.py: one GPU here: stage 09 runs one rank on it, so no plane crosses between GPUs "
            "(with periodic boundaries the rank exchanges with itself); the scaling needs two or more GPUs")
    return rest


def exercise_state(stage):
    """('not attempted' | 'passing' | 'failing' | 'no GPU' | 'not built', output)."""
    if (why := not_built(stage)) is not None:
        return "not built", why
    for args in EXERCISE_RUNS.get(stage, [["--n", EXERCISE_SIZES]]):
        run = subprocess.run([str(program(stage, "exercise")), "--as-test", "--check-only", *args],
                             capture_output=True, text=True)
        out = run.stdout + run.stderr
        if run.returncode == 77:
            return ("not attempted" if "not attempted" in out else "no GPU"), out
        if run.returncode != 0:
            return "failing", out
    return "passing", out


def median_ms(program_path, extra=()):
    """The median kernel time (ms) of one short timed run of a 3D stage program, from its --json
    record ("time_ms"; for a time-stepping stage "step_ms", or the loop's time per step when it
    fuses steps); CourseError with the reason when there is none."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "run.jsonl"
        run = subprocess.run([str(program_path), "--n", str(TIMING_N), "--reps", str(TIMING_REPS),
                              "--json", str(log), *extra], capture_output=True, text=True)
        if run.returncode != 0:
            raise CourseError(f"{program_path.name} exited with {run.returncode}")
        try:
            record = json.loads(log.read_text().splitlines()[-1])
            if "time_ms" not in record and record.get("fused_steps", 1) > 1:
                return float(record["loop_ms"]["median"]) / record["steps"]
            return float(record.get("time_ms", record.get("step_ms"))["median"])
        except (OSError, ValueError, IndexError, KeyError, TypeError):
            raise CourseError(f"{program_path.name} wrote no time_ms.median to --json") from None


def timing_text(exercise_ms, solution_ms):
    """'0.610 ms vs solution 0.380 ms (1.6x slower)'; within 5% counts as the same."""
    ratio = exercise_ms / solution_ms
    factor = max(ratio, 1 / ratio)
    verdict = "about the same" if factor < 1.05 else f"{factor:.1f}x {'slower' if ratio > 1 else 'faster'}"
    return f"{exercise_ms:.3f} ms vs solution {solution_ms:.3f} ms ({verdict})"


# ---------------------------------------------------------------- hints

HINT_HEADING = re.compile(r"## Hint (\d+)\s*")


def parse_hints(path):
    """The hints of a HINTS.md, in order. Each starts at a line '## Hint N' (N = 1, 2, 3, ...)
    and runs to the next; text before the first is a preamble. Any other '## ' heading, a
    number out of order or an empty hint is an error, so that a typo cannot merge two hints."""
    hints = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("## "):
            match = HINT_HEADING.fullmatch(line)
            if not match or int(match[1]) != len(hints) + 1:
                raise CourseError(f"{rel(path)}:{number}: expected '## Hint {len(hints) + 1}', found '{line}'")
            if hints and not "".join(hints[-1]).strip():
                raise CourseError(f"{rel(path)}:{number}: hint {len(hints)} is empty")
            hints.append([])
        elif hints:
            hints[-1].append(line)
    if not hints:
        raise CourseError(f"{rel(path)}: no hints (each hint starts with a line '## Hint N', N = 1, 2, ...)")
    if not "".join(hints[-1]).strip():
        raise CourseError(f"{rel(path)}: hint {len(hints)} is empty")
    return ["\n".join(lines).strip() for lines in hints]


def stage_hints(stage):
    path = ROOT / "chapters" / stage / "HINTS.md"
    if not path.exists():
        raise CourseError(f"stage {stage[:2]} has no hints yet ({rel(path)} does not exist)")
    return parse_hints(path)


def load_state():
    """The state file's contents; a missing or unreadable file counts as empty (it only holds
    how many hints were shown, which is worth less than a crash)."""
    try:
        state = json.loads(STATE.read_text())
        shown = state.get("hints_shown", {}) if isinstance(state, dict) else None
        if isinstance(shown, dict) and all(isinstance(v, int) for v in shown.values()):
            return state
        print(f"course.py: {rel(STATE)} is not what it should be; starting it afresh", file=sys.stderr)
    except FileNotFoundError:
        pass
    except (OSError, ValueError) as e:
        print(f"course.py: cannot read {rel(STATE)} ({e}); starting it afresh", file=sys.stderr)
    return {}


def save_state(state):
    STATE.parent.mkdir(parents=True, exist_ok=True)
    temporary = STATE.with_name(STATE.name + ".tmp")  # written whole, then renamed: never half a file
    temporary.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
    os.replace(temporary, STATE)


def hints_used(stage):
    """'hints used: k of n (python3 course.py hint NN)', or why there are none."""
    try:
        total = len(stage_hints(stage))
    except CourseError as e:
        return str(e)
    shown = min(load_state().get("hints_shown", {}).get(stage, 0), total)
    return f"hints used: {shown} of {total} (python3 course.py hint {stage[:2]})"


# ---------------------------------------------------------------- reset

MARKER_LINE = re.compile(rb"^#define I_AM_NOT_DONE[ \t]*\r?$", re.M)


def git(*args):
    """git's stdout (bytes) run in ROOT, or None when git fails; CourseError without git."""
    try:
        run = subprocess.run(["git", *args], cwd=ROOT, capture_output=True)
    except FileNotFoundError:
        raise CourseError("reset needs git, which is not installed") from None
    return run.stdout if run.returncode == 0 else None


def shipped_skeleton(stage):
    """(the skeleton of `stage` as shipped, the commit it comes from).

    The shipped version is the newest committed one that still has the line
    '#define I_AM_NOT_DONE': a learner deletes that line first, so their commits lack it. When
    the branch tracks the course's repository (a clone), the search starts at the fork point
    (git merge-base HEAD @{upstream}), which excludes the learner's commits even where they
    kept the marker. Either way the file comes from git, so it does not matter whether the
    learner committed their work."""
    path = rel(exercise_file(stage))
    fork = git("merge-base", "HEAD", "@{upstream}")
    start = fork.decode().strip() if fork else "HEAD"
    commits = git("log", "--format=%H", start, "--", path)
    if commits is None:
        raise CourseError(f"cannot read the history of {path}: is {ROOT} a git clone of the course?")
    for commit in commits.decode().split():
        text = git("show", f"{commit}:./{path}")
        if text is not None and MARKER_LINE.search(text):
            return text, commit
    raise CourseError(f"no committed version of {path} has the line '#define I_AM_NOT_DONE', "
                      f"so there is no skeleton to go back to")


def backup_path(path):
    """stencil.cu.bak, or .bak.1, .bak.2, ... : the first that does not exist yet."""
    backup, number = path.with_name(path.name + ".bak"), 0
    while backup.exists():
        number += 1
        backup = path.with_name(f"{path.name}.bak.{number}")
    return backup


def reset_stage(stage):
    """Puts the stage's skeleton back as shipped, keeping the learner's file as a backup.
    Returns what it did, in one line."""
    path = exercise_file(stage)
    skeleton, commit = shipped_skeleton(stage)
    if path.exists() and path.read_bytes() == skeleton:
        return f"{rel(path)} is already the skeleton as shipped: nothing to do"
    saved = ""
    if path.exists():
        backup = backup_path(path)
        path.rename(backup)
        saved = f"; your file is now {rel(backup)}"
    path.write_bytes(skeleton)
    return f"{rel(path)} is the skeleton as shipped again (from commit {commit[:10]}){saved}"


def confirm(question):
    """True only when the answer on stdin is y or yes; no stdin (EOF) is a no, said as such."""
    print(f"{question} [y/N] ", end="", flush=True)
    answer = sys.stdin.readline() if sys.stdin else ""
    if not answer:
        say("\nno answer (stdin is closed)")
    return answer.strip().lower() in ("y", "yes")


# ---------------------------------------------------------------- watch

def file_snapshot(path):
    """What `watch` compares once a second: (mtime, size, SHA-256 of the content), or None when
    the file is missing. The hash catches a save within the clock's resolution."""
    try:
        data = path.read_bytes()
        status = path.stat()
    except FileNotFoundError:
        return None
    return status.st_mtime_ns, status.st_size, hashlib.sha256(data).hexdigest()


def file_changed(path, last):
    """(whether `path` differs from the snapshot `last`, its snapshot now)."""
    now = file_snapshot(path)
    return now != last, now


def build_and_check(stage):
    """One round of `watch`: build the exercise, check it, say the result."""
    say(f"\n{time.strftime('%H:%M:%S')} {rel(exercise_file(stage))} changed: building")
    configure()
    if build_target(f"stage_{stage}_exercise") != 0:
        say("the build failed: fix the error above and save again")
        return
    state, out = exercise_state(stage)
    if state == "no GPU":
        say(f"{rel(exercise_file(stage))} compiled, but there is no GPU here to check it on: {skip_reason(out)}")
    else:
        say("PASS" if state == "passing" else out.strip())
    say(hints_used(stage))


# ---------------------------------------------------------------- commands

def test_suites():
    """(the suites of the tests Meson knows, sorted, as `--suite` takes them; the project names)."""
    run = subprocess.run([sys.executable, "-m", "mesonbuild.mesonmain", "introspect", "--tests", str(BUILD)],
                         cwd=ROOT, capture_output=True, text=True)
    try:
        tests = json.loads(run.stdout)
    except ValueError:
        return [], []
    full = {suite for test in tests for suite in test.get("suite", [])}
    return sorted({s.split(":", 1)[-1] for s in full}), sorted({s.split(":", 1)[0] for s in full if ":" in s})


def option_values(args, option):
    """The values given to `option` in args, as `--option VALUE` or `--option=VALUE`."""
    values = [a.split("=", 1)[1] for a in args if a.startswith(option + "=")]
    values += [args[i + 1] for i, a in enumerate(args[:-1]) if a == option]
    return values


def check_suites(args):
    """Exits 2 naming the suites when --suite or --no-suite names none (meson test would print
    'No suitable tests defined.' and exit 0, so a typo would look like success)."""
    wanted = option_values(args, "--suite") + option_values(args, "--no-suite")
    if not wanted:
        return
    suites, projects = test_suites()
    if not suites:
        return  # Meson did not say: let meson test judge
    known = set(suites) | {f"{p}:{s}" for p in projects for s in suites} | set(projects) | {f"{p}:" for p in projects}
    unknown = [w for w in wanted if w not in known]
    if unknown:
        fail(f"no test suite {', '.join(repr(u) for u in unknown)}; the suites are: {', '.join(suites)} "
             f"(e.g. python3 course.py test --suite unit)", 2)


# The message of a program that skips because an exercise still has its '#define I_AM_NOT_DONE'.
NOT_ATTEMPTED = re.compile(r"exercise (\d\d)_\w+ is not attempted yet")


def skip_reasons(log):
    """{reason: number of tests} for the tests that Meson's JSON log `log` records as SKIP. The
    reason is the last line a test printed that starts with 'SKIP: ' (what the programs and test
    scripts print before they exit 77); the "not attempted" messages of the exercises make one
    reason that names their stages."""
    reasons, unattempted = {}, []
    for line in log.read_text().splitlines():
        try:
            test = json.loads(line)
        except ValueError:
            continue
        if test.get("result") != "SKIP":
            continue
        printed = (test.get("stdout") or "") + "\n" + (test.get("stderr") or "")
        said = [l.strip()[len("SKIP: "):] for l in printed.splitlines() if l.strip().startswith("SKIP: ")]
        if said and (match := NOT_ATTEMPTED.search(said[-1])):
            unattempted.append(match[1])
            continue
        reason = said[-1] if said else "no reason printed (see the test's output in build/meson-logs/testlog.txt)"
        reasons[reason] = reasons.get(reason, 0) + 1
    # One line for reasons that differ only in their closing parenthesis ("no CUDA GPU is available
    # (no NVIDIA driver is loaded, ...)" and "(CUDA driver version is insufficient ...)").
    merged, details = {}, {}
    for reason, count in reasons.items():
        match = re.fullmatch(r"(.+?) \((.+)\)", reason)
        head = match[1] if match else reason
        merged[head] = merged.get(head, 0) + count
        if match and match[2] not in details.setdefault(head, []):
            details[head].append(match[2])
    reasons = {(f"{head} ({'; '.join(details[head])})" if details.get(head) else head): count
               for head, count in merged.items()}
    if unattempted:
        stages_named = ", ".join(sorted(set(unattempted)))
        reasons[f"exercises not attempted yet (stages {stages_named}: each counts once you delete its "
                f"'#define I_AM_NOT_DONE')"] = len(unattempted)
    return reasons


def say_skip_reasons(args, since):
    """After meson test: one line per reason for the skipped tests, most common first, from the
    log this run wrote (Meson's own counts are in its summary above)."""
    logbase = (option_values(args, "--logbase") or ["testlog"])[-1]
    log = BUILD / "meson-logs" / f"{logbase}.json"
    try:
        if log.stat().st_mtime < since - 1:
            return  # no log from this run (meson test stopped before any test ran)
        reasons = skip_reasons(log)
    except OSError:
        return
    if reasons:
        total = sum(reasons.values())
        say(f"\nthe {total} skipped test{'s' if total > 1 else ''}, by reason (each test's output is in {rel(log)}):")
        width = len(str(max(reasons.values())))
        for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
            say(f"  {count:{width}} skipped: {reason}")


def cmd_test(args):
    build()
    check_suites(args)
    since = time.time()
    code = meson("test", "-C", str(BUILD), "--print-errorlogs", *args, check=False)
    say_skip_reasons(args, since)
    sys.exit(code)


def skip_reason(out):
    """What a program said after 'SKIP: ', or its whole output."""
    return out.strip().split("SKIP: ")[-1]


def cmd_progress(_args):
    build()
    say(f"stage                    exercise  (if passing: its time at N = {TIMING_N} against the solution's)")
    next_stage, no_gpu = None, None
    for stage in stages():
        state, out = exercise_state(stage)
        if state == "no GPU":  # attempted, and it built (build() stops on a compiler error)
            no_gpu = skip_reason(out)
            say(f"  {stage:22} builds; can't check: no GPU")
            continue
        say(f"  {stage:22} {state:10}{timing(stage) if state == 'passing' else ''}".rstrip())
        if state != "passing" and next_stage is None:
            next_stage = stage
    if no_gpu:
        say(f"\nthe exercises you started compile, but only a GPU can check them: {no_gpu}")
    if next_stage:
        say(f"\nnext: read chapters/{next_stage}/README.md, then edit chapters/{next_stage}/stencil.cu "
            f"and check it with `python3 course.py run {next_stage[:2]}` (stuck? `python3 course.py hint "
            f"{next_stage[:2]}`)")
    elif not no_gpu:
        say("\nevery exercise passes. Compare your timings with the solutions: python3 course.py bench")


def timing(stage):
    """The timing column of `progress` for a passing exercise."""
    if stage in NOT_TIMED:
        return f"(not timed: {NOT_TIMED[stage]})"
    try:
        extra = TIMING_EXTRA.get(stage, [])
        return timing_text(median_ms(program(stage, "exercise"), extra), median_ms(program(stage, "solution"), extra))
    except CourseError as e:
        return f"(not timed: {e})"


def cmd_run(args):
    if not args:
        fail("usage: course.py run STAGE [--solution] [OPTIONS]", 2)
    stage, rest = find_stage(args[0]), args[1:]
    implementation = "solution" if "--solution" in rest else "exercise"
    rest = [a for a in rest if a != "--solution"]
    build()
    if (why := not_built(stage, implementation)) is not None:
        fail(why)
    if gpu_count() == 0 and "--help" not in rest:
        say(f"course.py: {rel(source_file(stage, implementation))} compiled "
            f"({rel(program(stage, implementation))} is built); nvidia-smi lists no GPU here to run it on")
    if stage == MANY_GPUS:
        rest = many_gpu_arguments(rest)
    sys.exit(subprocess.run([str(program(stage, implementation)), *rest], cwd=ROOT).returncode)


def cmd_bench(args):
    from bench import main as bench_main, parse  # the benchmark lives in plots/bench.py
    parse(args)  # --help and a wrong option answer now, not after the build (minutes on a fresh machine)
    build()
    sys.exit(bench_main(ROOT, BUILD, stages(), exercise_state, args))


def stage_arguments(args, usage, flags=(), required=True):
    """(the stage that args name, or None when not `required`; the flags of `flags` given).
    Anything else is a usage error (exit 2)."""
    given = {a for a in args if a in flags}
    rest = [a for a in args if a not in flags]
    if len(rest) > 1 or any(a.startswith("-") for a in rest) or (required and not rest):
        fail(f"usage: {usage}", 2)
    return (find_stage(rest[0]) if rest else None), given


def cmd_hint(args):
    stage, flags = stage_arguments(args, "course.py hint STAGE [--all]", ["--all"])
    hints = stage_hints(stage)
    total = len(hints)
    state = load_state()
    shown = state.setdefault("hints_shown", {})
    before = shown.get(stage, 0)
    numbers = range(1, total + 1) if "--all" in flags else [min(before + 1, total)]
    shown[stage] = max(before, numbers[-1])
    save_state(state)  # before printing: output cut short (a pipe, Ctrl-C) still counts the hint
    if "--all" not in flags and before >= total:
        say(f"all {total} hints for {stage} were shown; the last one again:\n")
    for number in numbers:
        say(f"hint {number} of {total} for {stage}:\n\n{hints[number - 1]}\n")
    if "--all" not in flags and numbers[-1] < total:
        say(f"(`python3 course.py hint {stage[:2]}` again for hint {numbers[-1] + 1}, --all for all of them)")


def cmd_reset(args):
    usage = "course.py reset STAGE | --all"
    stage, flags = stage_arguments(args, usage, ["--all"], required=False)
    if (stage is None) == (not flags):  # exactly one of STAGE and --all
        fail(f"usage: {usage}", 2)
    targets = [stage] if stage else [s for s in stages() if exercise_file(s).exists()]
    if not stage and not confirm(f"put all {len(targets)} skeletons back as shipped (your files are kept as .bak)?"):
        fail("nothing was reset", 1)
    failed = False
    for target in targets:
        try:
            say(reset_stage(target))
        except CourseError as e:
            print(f"course.py: {e}", file=sys.stderr)
            failed = True
    sys.exit(1 if failed else 0)


def cmd_watch(args):
    stage, _ = stage_arguments(args, "course.py watch STAGE")
    path = exercise_file(stage)
    if not path.exists():
        fail(f"{rel(path)} does not exist (python3 course.py reset {stage[:2]} puts the skeleton back)")
    say(f"watching {rel(path)}: every save rebuilds and checks it; Ctrl-C stops")
    last = None
    try:
        while True:
            changed, last = file_changed(path, last)
            if changed and last is None:
                say(f"\n{rel(path)} is gone; waiting for it to come back")
            elif changed:
                build_and_check(stage)
            time.sleep(1)
    except KeyboardInterrupt:
        say("\nstopped watching")
        sys.exit(0)


COMMANDS = {"test": cmd_test, "bench": cmd_bench, "progress": cmd_progress, "run": cmd_run,
            "hint": cmd_hint, "reset": cmd_reset, "watch": cmd_watch}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help", "help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    if sys.argv[1] not in COMMANDS:
        fail(f"unknown command '{sys.argv[1]}'; the commands are: {', '.join(COMMANDS)}", 2)
    sys.path.insert(0, str(ROOT / "plots"))
    try:
        COMMANDS[sys.argv[1]](sys.argv[2:])
    except CourseError as e:
        fail(str(e))
