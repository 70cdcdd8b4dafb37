"""The main job: benchmark every stage on this GPU, record the results, draw the plots.

Run through `python3 course.py bench [--full] [--n 128,256,512] [--reps R] [--no-ncu]
[--no-alternatives] [--no-heat] [--no-high-order]`: it prints what it will run and about how long
that takes (plan.py: a per-part model fitted to an H100), then a line per part with the time so
far and about how long is left. The default took 3m19s on an H100 and draws the same figures as
`--full` (about 12 minutes: every size checked, 50 repetitions), from fewer repetitions and with
--time-only at the largest size (checked at the smaller ones). Or `python3 course.py bench --sweep
[--reps 20] [--no-heat | --only-heat]` for stages 02 and 06 at every N from 64 to 1024 and stages
07 and 08 from 256 to 1024 (plots/sweep.py; its own results file, plots/results/sweep/<gpu>.json;
--only-heat: stages 07 and 08 alone, into that file), or `python3 course.py bench --only-08` to
measure stage 08 against stage 07 again (a few minutes, not ten) into this GPU's results file,
keeping the rest, `--only-10` for stage 10 and the CuPy/PyTorch stencils of order R beside it, or
`--only-heat` (without --sweep) for the whole heat-equation part, stage 07 and stage 08 against it.
A part measured alone names its own date and commit.
Without a GPU it says so and draws the figures from the shipped results in plots/results/.
One results file per GPU: plots/results/<gpu>.json (schema in results_schema.py); figures go to
plots/figures/<gpu>/."""
import argparse
import json
import re
import signal
import subprocess
import tempfile
from pathlib import Path

from common import BenchStopped, command_output, environment, run_program, say, slug, tool, unchecked
from lesson_tables import after_writing
from results_schema import SCHEMA, ResultsError, load_results, load_sweep, validate

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FIGURES = HERE / "figures"
BASELINE = "02_basic_sweep"
HEAT_STAGE = "07_heat_equation"  # stages from 07 on step the heat equation in time: see heat_bench.py
FUSED_STAGE = "08_temporal_blocking"
HIGH_ORDER_STAGE = "10_high_order"
# What the book's model counts (bytes loaded from global memory, as requested through L1) and
# what actually crosses the DRAM interface after the caches.
NCU_METRICS = ["l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]


def gpu_present(build):
    """(whether a GPU answers, what the probe said): stage 02's program is the probe, which exits 77
    without a GPU; without that program (not built) nothing can be measured either."""
    program = build / f"stage_{BASELINE}_solution"
    if not program.exists():
        return False, f"{program.name} is not built (python3 course.py bench builds every stage first)"
    probe = subprocess.run([str(program), "--as-test", "--check-only", "--n", "3"], capture_output=True, text=True)
    return probe.returncode != 77, (probe.stdout + probe.stderr).strip().removeprefix("SKIP: ")


def draw(doc, name):
    try:
        from plot import draw_all
    except ImportError as e:
        say(f"cannot draw the plots: {e} (python3 -m pip install -r requirements.txt)")
        return 1
    out = FIGURES / name
    for path in draw_all(doc, out):
        say(f"  wrote {path.relative_to(HERE.parent)}")
    return 0


def draw_shipped(why, folder=RESULTS, load=load_results, draw_one=None):
    """Without a GPU: draws the figures of every shipped results file in `folder` (the main
    results, or with load and draw_one the sweep's), each into FIGURES/<file's stem>."""
    draw_one = draw_one or draw
    say(f"Nothing to measure with: {why}.")
    import many_gpus
    files = sorted(f for f in folder.glob("*.json") if not f.name.startswith(many_gpus.PREFIX))
    if not files:
        say(f"There are no shipped results in {folder.relative_to(HERE.parent)}/ to draw either.")
        return 1
    say("Drawing the figures from the shipped results instead:")
    status = 0
    for f in files:
        try:
            doc = load(f)
        except ResultsError as e:
            say(f"  skipping {e}")
            status = 1
            continue
        say(f"  {f.relative_to(HERE.parent)} ({doc['gpu']}, {doc['date']})")
        status |= draw_one(doc, f.stem)
    return status


def draw_shipped_many_gpus():
    """Without a GPU: stage 09's scaling figure from each shipped many_gpus-<gpu>.json."""
    import many_gpus as m
    status = 0
    for f in sorted(RESULTS.glob(f"{m.PREFIX}*.json")):
        try:
            doc = m.validate(json.loads(f.read_text()))
        except (OSError, ValueError, m.ManyGpusError) as e:
            say(f"  skipping {f.relative_to(HERE.parent)}: {e}")
            status = 1
            continue
        path = m.draw(doc, FIGURES / slug(doc["gpu"]))
        say(f"  {f.relative_to(HERE.parent)} ({doc['gpu']} x{doc['gpus']}, {doc['date']}): {path.relative_to(HERE.parent)}")
    return status


def profile(program, stage, n, ncu, options=("--check-only",)):
    """Measured OP/B from one run under Nsight Compute, or (None, why). options: how the program
    runs; the first kernel whose name holds "stencil" is profiled: --check-only (--full) runs it
    once before its CPU check, --time-only --reps 1 --warmup 0 (the quick plan) once on random
    input made on the GPU, with no CPU check; either way Nsight Compute flushes the caches first."""
    cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(NCU_METRICS), "-k", "regex:stencil", "-c", "1",
           "--csv", "--page", "raw", str(program), "--n", str(n), *options]
    run = subprocess.run(cmd, capture_output=True, text=True)
    rows = [line for line in run.stdout.splitlines() if line.startswith('"')]
    if run.returncode != 0 or len(rows) < 3:
        lines = (run.stdout + run.stderr).strip().splitlines()
        reason = next((l for l in lines if "ERR_" in l or "rror" in l), lines[-1] if lines else "no output")
        return None, f"ncu could not read the counters: {reason.strip()}"
    import csv
    header, units, values = list(csv.reader(rows[:3]))
    record = dict(zip(header, values))
    scale = dict(zip(header, units))

    def number(metric):
        factor = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12}.get(scale.get(metric, ""), 1)
        return float(record[metric].replace(",", "")) * factor

    flops = 13.0 * (n - 2) ** 3
    loads, read, write = (number(m) for m in NCU_METRICS)
    return {"stage": stage, "implementation": "solution", "n": n, "flops": flops, "global_load_bytes": loads,
            "dram_read_bytes": read, "dram_write_bytes": write, "opb_global": flops / loads,
            "opb_dram": flops / (read + write)}, None


def summary(doc):
    runs = {(r["stage"], r["implementation"], r["n"]): r for r in doc["runs"]}
    profiles = {p["stage"]: p for p in doc.get("profiles", [])}
    say(f"\nSummary - {doc['gpu']} ({doc['date']}, commit {doc['commit']}); speed-up over stage 02 in the same run")
    say(f"{'stage':22} {'impl':8} {'N':>5} {'median ms':>10} {'% copy':>7} {'vs 02':>6} "
        f"{'OP/B book':>9} {'OP/B L1':>8} {'OP/B DRAM':>9}")
    for (stage, impl, n), r in sorted(runs.items()):
        if "time_ms" not in r:
            say(f"{stage:22} {impl:8} {n:5d}  check FAILED")
            continue
        base = runs.get((BASELINE, "solution", n))
        speedup = base["time_ms"]["median"] / r["time_ms"]["median"] if base and "time_ms" in base else float("nan")
        p = profiles.get(stage) if impl == "solution" else None
        measured = f"{p['opb_global']:8.2f} {p['opb_dram']:9.2f}" if p else f"{'-':>8} {'-':>9}"
        say(f"{stage:22} {impl:8} {n:5d} {r['time_ms']['median']:10.4f} {100 * r['fraction_of_copy']:6.1f}% "
            f"{speedup:5.2f}x {r['model']['opb']:9.2f} {measured}")
    for a in doc.get("alternatives", []):
        base = runs.get((BASELINE, "solution", a["n"]))
        if "time_ms" in a and base:
            say(f"{a['name']:31} {a['n']:5d} {a['time_ms']['median']:10.4f} {100 * a['fraction_of_copy']:6.1f}% "
                f"{base['time_ms']['median'] / a['time_ms']['median']:5.2f}x")
    if doc.get("profile_note"):
        say(f"(measured OP/B: {doc['profile_note']})")
    if doc.get("heat"):
        from heat_bench import summary as heat_summary
        heat_summary(doc["heat"])
    if doc.get("high_order"):
        from high_order_plot import summary as high_order_summary
        high_order_summary(doc["high_order"], say)


def stop_on_sigterm(signum, frame):
    """SIGTERM (what `timeout` sends) stops the alternatives as Ctrl-C does."""
    raise KeyboardInterrupt


def parse(argv):
    ap = argparse.ArgumentParser(prog="course.py bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="128,256,512", help="grid sizes (default %(default)s)")
    ap.add_argument("--reps", type=int, default=None,
                    help="timed repetitions of every run (default: 20 for a sweep, 10 for the heat equation's "
                         "loops; 50 with --full; 20 with --sweep)")
    ap.add_argument("--full", action="store_true",
                    help="the full, slower measurement behind the shipped results (about 12 minutes on an H100, "
                         "the default about 3.5): every size checked against the CPU reference, 50 repetitions, "
                         "the profiles from checked runs")
    ap.add_argument("--sweep", action="store_true",
                    help="instead: stages 02 and 06 at every N from 64 to 1024, %% of copy against N; then "
                         "stages 07 and 08 from N = 256 (--no-heat leaves them out) and stage 10's fast kernel "
                         "at every order from N = 255 (--no-high-order leaves it out)")
    ap.add_argument("--no-ncu", action="store_true", help="skip the Nsight Compute measurements")
    ap.add_argument("--no-alternatives", action="store_true", help="skip CuPy/PyTorch")
    ap.add_argument("--no-heat", action="store_true",
                    help="skip stages 07 and 08 (the heat equation, temporal blocking); with --sweep, its heat part")
    ap.add_argument("--no-high-order", action="store_true", help="skip stage 10 (stencils of order R)")
    ap.add_argument("--no-many-gpus", action="store_true", help="skip stage 09's scaling over the GPUs")
    ap.add_argument("--only-08", action="store_true",
                    help="only stage 08 against stage 07, replacing that part of this GPU's results file")
    ap.add_argument("--only-10", action="store_true",
                    help="only stage 10 (and CuPy/PyTorch beside it), replacing that part of this GPU's results file; "
                         "with --sweep, stage 10's part of this GPU's sweep file")
    ap.add_argument("--only-heat", action="store_true",
                    help="only stages 07 and 08 (the heat equation, temporal blocking), replacing that part of "
                         "this GPU's results file; with --sweep, that part of this GPU's sweep file")
    a = ap.parse_args(argv)
    if a.only_heat and a.no_heat:
        ap.error("--only-heat and --no-heat contradict each other")
    if a.only_10 and a.no_high_order:
        ap.error("--only-10 and --no-high-order contradict each other")
    only = [flag for flag, on in (("--only-08", a.only_08), ("--only-10", a.only_10), ("--only-heat", a.only_heat)) if on]
    if len(only) > 1:
        ap.error(f"{' and '.join(only)}: each measures one part again; give one of them")
    if a.sweep and a.only_08:
        ap.error("--only-08 has no sweep: --sweep --only-heat measures stages 07 and 08 at every N")
    if a.reps is not None and not 1 <= a.reps <= 100000:
        ap.error(f"--reps must be between 1 and 100000, got {a.reps}")
    if not re.fullmatch(r"\d+(,\d+)*", a.n):
        ap.error(f"--n expects sizes like 128,256,512, got '{a.n}'")
    return a


def make_plan(build, stages, exercise_state, a, gpus=1):
    """The parts of this run (plan.main_plan) from the options and the programs built."""
    import plan
    stages3d = [s for s in stages if (build / f"stage_{s}_solution").exists()
                and s != "01_discretization" and s < HEAT_STAGE]
    jobs = [(s, "solution") for s in stages3d]
    for s in stages3d:
        state, _ = exercise_state(s)
        if state != "not attempted":
            jobs.append((s, "exercise"))
    heat = (build / f"stage_{HEAT_STAGE}_solution").exists() and not a.no_heat
    return plan.main_plan(
        build, [int(x) for x in a.n.split(",")], a.reps, a.full, one_sweep=jobs,
        convergence=(build / "stage_01_discretization_solution").exists(), heat=heat,
        fused=heat and (build / f"stage_{FUSED_STAGE}_solution").exists(),
        high_order=(build / f"stage_{HIGH_ORDER_STAGE}_solution").exists() and not a.no_high_order,
        ncu=not a.no_ncu and tool("ncu") is not None and bool(stages3d), alternatives=not a.no_alternatives,
        many_gpus=not a.no_many_gpus and gpus >= 2 and (build / "stage_09_many_gpus_solution").exists())


def main(root, build, stages, exercise_state, argv):
    a = parse(argv)
    if a.sweep:
        import sweep
        present, why = gpu_present(build)
        if not present:
            return draw_shipped(why, RESULTS / "sweep", load_sweep,
                                lambda doc, name: sweep.draw(doc, FIGURES / name, say))
        try:
            if a.only_heat or a.only_10:
                run_part = sweep.run_heat_only if a.only_heat else sweep.run_high_order_only
                return run_part(root, build, a.reps or 20, environment(root), slug, RESULTS, FIGURES, say,
                                run_program, load_sweep)
            return sweep.run_sweep(root, build, a.reps or 20, environment(root), slug, RESULTS, FIGURES, say,
                                   run_program, heat=not a.no_heat, high_order=not a.no_high_order)
        except (BenchStopped, ResultsError) as e:
            say(f"bench --sweep: {e}")
            return 1
    if a.only_08:
        return only_fused(root, build, a.reps or 50)
    if a.only_heat and not a.sweep:
        return only_heat(root, build, a)
    if a.only_10:
        return only_high_order(root, build, a)
    sizes = [int(x) for x in a.n.split(",")]

    present, why = gpu_present(build)
    if not present:
        return draw_shipped(why) | draw_shipped_many_gpus()

    import plan
    parts = make_plan(build, stages, exercise_state, a, gpus=command_output(["nvidia-smi", "-L"]).count("GPU "))
    progress = plan.Progress(parts, say)
    progress.start("--full" if a.full else "quick; --full for the full measurement")
    doc = {"schema": SCHEMA, "gpu": None, **environment(root), "sizes": sizes, "runs": [], "profiles": [],
           "profile_note": None, "convergence": None, "alternatives": [], "heat": None}
    if a.no_ncu or tool("ncu") is None:
        doc["profile_note"] = "skipped (--no-ncu)" if a.no_ncu else "Nsight Compute (ncu) is not installed"
    status = 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            for number, part in enumerate(parts):
                progress.begin(part)
                if part.key == "draw":
                    status |= finish(root, doc, a, parts, progress)
                    if status:
                        return status
                elif part.key == "many_gpus":
                    status |= many_gpus(root, build, a.reps or 20)
                else:
                    RUN_PART[part.key](part, doc, build, a, tmp, number)
    except BenchStopped as e:
        say(str(e))
        return 1
    progress.finish()
    return status


def run_records(cmd, what, out, failure="gave wrong results"):
    """Runs one measuring program with --json out; (passed, its records)."""
    ok = run_program([*cmd, "--json", out], what, failure)
    records = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    out.unlink(missing_ok=True)
    return ok, records


def run_one_sweep(part, doc, build, a, tmp, number):
    """A stage 02-06 program: checked (and timed) at the first command's sizes, then timed with
    --time-only at the second's (the quick plan), those records marked with where they were checked."""
    what = f"{part.extra['stage']} ({part.extra['implementation']})"
    passed, checked_at = True, []
    for cmd in part.commands:
        ok, records = run_records(cmd, what, tmp / f"runs_{number}.jsonl")
        if "--time-only" in cmd:
            records = [unchecked(r, passed, checked_at) for r in records]
        else:
            passed = ok and all(r["check"]["ok"] for r in records)
            checked_at = [r["n"] for r in records]
        doc["runs"] += records
    if doc["runs"] and doc["gpu"] is None:
        doc["gpu"] = doc["runs"][0]["device"]


def run_convergence(part, doc, build, a, tmp, number):
    out = tmp / "study.jsonl"
    run = subprocess.run([str(part.commands[0][0]), "--json", str(out)], capture_output=True, text=True)
    if run.returncode == 0 and out.exists():
        doc["convergence"] = json.loads(out.read_text().splitlines()[-1])
    else:
        say(f"  the stage 01 program failed (exit {run.returncode}); no convergence data\n{run.stdout}")


def run_heat(part, doc, build, a, tmp, number):
    from heat_bench import measure
    doc["heat"] = measure(build / f"stage_{HEAT_STAGE}_solution", a.n, part.extra["reps"], tmp, quick=not a.full,
                          overhead_reps=part.extra["overhead_reps"])


def run_fused(part, doc, build, a, tmp, number):
    from heat_bench import measure_fused
    fused = measure_fused(build / f"stage_{HEAT_STAGE}_solution", build / f"stage_{FUSED_STAGE}_solution",
                          part.extra["reps"], tmp, quick=not a.full)
    if doc["heat"] is not None:
        doc["heat"]["fused"] = fused


def run_high_order(part, doc, build, a, tmp, number):
    """Stage 10: every order and kernel, checked at the first command's sizes; with the quick plan
    timed with --time-only at the second's, each record marked with its (kernel, order)'s check."""
    section = {"runs": [], "alternatives": [], "sizes": []}
    verdict = {}  # (kernel, order) -> (passed, [N])
    for cmd in part.commands:
        _, records = run_records(cmd, "stage 10 (order R)", tmp / f"order_{number}.jsonl")
        for r in records:
            key = (r["kernel"], r["order"])
            if "--time-only" in cmd:
                ok, at = verdict.get(key, (False, []))
                unchecked(r, ok, at)
            else:
                ok, at = verdict.get(key, (True, []))
                verdict[key] = (ok and r["check"]["ok"], at + [r["n"]])
        section["runs"] += records
    section["sizes"] = sorted({r["n"] for r in section["runs"]})
    if section["runs"]:
        doc["high_order"] = section
        if doc["gpu"] is None:
            doc["gpu"] = section["runs"][0]["device"]


def run_ncu(part, doc, build, a, tmp, number):
    ncu = tool("ncu")
    for cmd in part.commands:
        stage = Path(cmd[0]).name.removeprefix("stage_").removesuffix("_solution")
        p, why = profile(cmd[0], stage, int(cmd[cmd.index("--n") + 1]), ncu, [str(c) for c in cmd[3:]])
        if p is None:
            doc["profile_note"] = why
            say(f"  {why}; carrying on without measured OP/B")
            break
        doc["profiles"].append(p)


def run_alternatives(part, doc, build, a, tmp, number):
    """The last measuring part, and an optional one: stopped (Ctrl-C, or `timeout`), the bench still
    writes and draws everything measured before it."""
    import plan
    from alternatives import measure
    sizes = [int(x) for x in a.n.split(",")]
    checked, _ = plan.split_sizes(sizes, quick=not a.full)
    previous = signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        measure(sizes, part.extra.get("reps", a.reps or 20), doc["runs"], say, records=doc["alternatives"],
                check_sizes=checked)
        order_alternatives(doc.get("high_order"), part.extra.get("reps", a.reps or 20), a.full)
    except KeyboardInterrupt:
        say(f"bench: stopped while measuring the CuPy/PyTorch alternatives; writing the results with the "
            f"{len(doc['alternatives'])} measured before")
    finally:
        signal.signal(signal.SIGTERM, previous)


def order_alternatives(high, reps, full):
    """CuPy and PyTorch's stencils of order R beside stage 10's runs (the section `high`, if any),
    into its "alternatives"; checked at the first of its sizes (all of them with --full)."""
    import plan
    from alternatives import measure_orders
    if high:
        order_checked = plan.HIGH_ORDER_SIZES if full else plan.HIGH_ORDER_SIZES[:1]
        measure_orders(high["sizes"], plan.HIGH_ORDER_ORDERS, reps, high["runs"], say, records=high["alternatives"],
                       check_sizes=[n for n in order_checked if n in high["sizes"]])


RUN_PART = {"one_sweep": run_one_sweep, "convergence": run_convergence, "heat": run_heat, "fused": run_fused,
            "high_order": run_high_order, "ncu": run_ncu, "alternatives": run_alternatives}


def finish(root, doc, a, parts, progress):
    """Validates, writes the results file, prints the tables, draws the figures."""
    import plan
    doc["plan"] = {"mode": "full" if a.full else "quick", "estimated_s": round(plan.total(parts), 1),
                   "elapsed_s": round(progress.clock() - progress.start_time, 1)}
    if doc["gpu"] is None:
        say("bench: no run produced a record")
        return 1
    try:
        validate(doc)
    except ResultsError as e:
        say(f"bench: the results do not validate: {e}")
        return 1
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{slug(doc['gpu'])}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    say(f"\nwrote {path.relative_to(root) if path.is_relative_to(root) else path}")
    for line in after_writing(root, path):
        say(line)
    summary(doc)
    say("\nfigures:")
    return draw(doc, slug(doc["gpu"]))


def into_results(root, device, flag, part, put):
    """Puts a part measured alone into this GPU's results file in place of the old one: put(doc)
    replaces it, or says why the file cannot take it; then validates and writes. The document,
    or None after saying why not."""
    path = RESULTS / f"{slug(device)}.json"
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    try:
        doc = load_results(path)
    except (OSError, ValueError, ResultsError) as e:
        say(f"bench {flag}: {shown} cannot take the new part ({e}): run the whole bench first")
        return None
    why = put(doc)
    if why:
        say(f"bench {flag}: {shown} {why}: run the whole bench first")
        return None
    validate(doc)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    say(f"\nwrote {shown} ({part})")
    for line in after_writing(root, path):
        say(line)
    return doc


def measure_alone(flag, parts, runners, measured, build, a, titles=None):
    """Runs those of `parts` whose key `runners` names (key -> run(part, measured, build, a, tmp,
    number), the RUN_PART signature) into `measured`, saying each (its part's title, or titles[key]);
    False after saying so if stopped."""
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for number, part in enumerate(parts):
                if part.key in runners:
                    say(f"bench {flag}: {(titles or {}).get(part.key, part.title)}")
                    runners[part.key](part, measured, build, a, Path(tmp), number)
    except (BenchStopped, KeyboardInterrupt) as e:
        say(f"bench {flag}: stopped ({e or 'interrupted'})")
        return False
    return True


def only_fused(root, build, reps):
    """Stage 08 against stage 07 again, put into this GPU's results file in place of the old part;
    the part records its own date and commit (heat.fused_run), which its figure shows."""
    programs = [build / f"stage_{HEAT_STAGE}_solution", build / "stage_08_temporal_blocking_solution"]
    present, why = gpu_present(build)
    if not present:
        say(f"bench --only-08: {why}")
        return 1
    from heat_bench import measure_fused
    try:
        with tempfile.TemporaryDirectory() as tmp:
            fused = measure_fused(*programs, reps, Path(tmp))
    except BenchStopped as e:
        say(str(e))
        return 1
    if not fused:
        say("bench --only-08: no run produced a record")
        return 1

    def put(doc):
        if not doc.get("heat"):
            return "has no heat-equation part"
        doc["heat"]["fused"] = fused
        doc["heat"]["fused_run"] = environment(root)
    doc = into_results(root, fused[0]["device"], "--only-08", "stage 08's part", put)
    if doc is None:
        return 1
    from heat_bench import summary as heat_summary
    heat_summary(doc["heat"])
    return draw(doc, slug(doc["gpu"]))


def only_heat(root, build, a):
    """Stage 07's part again (runs, overhead, accuracy, Jacobi) and stage 08 against stage 07 where
    stage 08 was built, put into this GPU's results file in place of the old heat section; the
    section records its own date and commit (heat.run), which its figures show."""
    import plan
    if not (build / f"stage_{HEAT_STAGE}_solution").exists():
        say("bench --only-heat: stage 07 was not built")
        return 1
    present, why = gpu_present(build)
    if not present:
        say(f"bench --only-heat: {why}")
        return 1
    parts = plan.main_plan(build, [int(x) for x in a.n.split(",")], a.reps, a.full, one_sweep=[], convergence=False,
                           heat=True, fused=(build / f"stage_{FUSED_STAGE}_solution").exists(), high_order=False,
                           ncu=False, alternatives=False)
    measured = {"heat": None, "gpu": None}
    if not measure_alone("--only-heat", parts, {"heat": run_heat, "fused": run_fused}, measured, build, a):
        return 1
    heat = measured["heat"]
    records = [r for k in ("runs", "overhead", "accuracy", "jacobi", "fused") for r in (heat or {}).get(k) or []]
    if heat and heat.get("snapshots"):
        records.append(heat["snapshots"])
    device = next((r["device"] for r in records if r.get("device")), None)
    if device is None:
        say("bench --only-heat: no run produced a record")
        return 1

    def put(doc):
        doc["heat"] = {**heat, "run": environment(root)}  # a fresh section: no fused_run of the old one
    doc = into_results(root, device, "--only-heat", "stages 07 and 08's part", put)
    if doc is None:
        return 1
    from heat_bench import summary as heat_summary
    heat_summary(doc["heat"])
    return draw(doc, slug(doc["gpu"]))


def only_high_order(root, build, a):
    """Stage 10 again (every order and kernel, and CuPy/PyTorch beside it unless
    --no-alternatives), put into this GPU's results file in place of the old part; the part
    records its own date and commit (high_order.run), which its figure shows."""
    import plan
    present, why = gpu_present(build)
    if not present or not (build / f"stage_{HIGH_ORDER_STAGE}_solution").exists():
        say(f"bench --only-10: {why or 'stage 10 was not built'}")
        return 1
    parts = plan.main_plan(build, [int(x) for x in a.n.split(",")], a.reps, a.full, one_sweep=[], convergence=False,
                           heat=False, fused=False, high_order=True, ncu=False, alternatives=not a.no_alternatives)
    measured = {"gpu": None}

    def alternatives(part, measured, build, a, tmp, number):
        order_alternatives(measured.get("high_order"), part.extra.get("reps", a.reps or 20), a.full)
    if not measure_alone("--only-10", parts, {"high_order": run_high_order, "alternatives": alternatives},
                         measured, build, a, titles={"alternatives": "CuPy and PyTorch, R = 1..4"}):
        return 1
    section = measured.get("high_order")
    if not section:
        say("bench --only-10: no run produced a record")
        return 1

    def put(doc):
        doc["high_order"] = {**section, "run": environment(root)}
    doc = into_results(root, section["runs"][0]["device"], "--only-10", "stage 10's part", put)
    if doc is None:
        return 1
    from high_order_plot import summary as high_order_summary
    high_order_summary(doc["high_order"], say)
    return draw(doc, slug(doc["gpu"]))


def many_gpus(root, build, reps):
    """Stage 09's scaling (plots/many_gpus.py) where two or more GPUs are present."""
    program = build / "stage_09_many_gpus_solution"
    if not program.exists():
        say("stage 09 (many GPUs) was not built (it needs NCCL): no scaling measured")
        return 0
    count = command_output(["nvidia-smi", "-L"]).count("GPU ")
    if count < 2:
        say("one GPU here: stage 09's scaling needs two or more (`python3 course.py run 09` runs it with one rank)")
        return 0
    say(f"\nstage 09 on {count} GPUs: strong and weak scaling, the overlap")
    import many_gpus as m
    try:
        doc = m.measure(program, count, reps, say)
    except m.ManyGpusError as e:
        say(f"  {e}")
        return 1
    doc.update({k: v for k, v in environment(root).items() if k in ("date", "commit", "nvcc", "driver")})
    m.validate(doc)
    path = RESULTS / f"{m.PREFIX}{slug(doc['gpu'])}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    say(f"wrote {path.relative_to(root)}")
    m.summary(doc, say)
    say(f"  wrote {m.draw(doc, FIGURES / slug(doc['gpu'])).relative_to(root)}")
    return 0
