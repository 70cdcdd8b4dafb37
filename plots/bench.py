"""The main job: benchmark every stage on this GPU, record the results, draw the plots.

Run through `python3 course.py bench [--n 128,256,512] [--reps 50] [--no-ncu] [--no-alternatives]
[--no-heat]`, or `python3 course.py bench --sweep [--reps 20]` for stages 02 and 06 at every N from
64 to 1024 (plots/sweep.py; its own results file, plots/results/sweep/<gpu>.json), or
`python3 course.py bench --only-08` to measure stage 08 against stage 07 again (a few minutes, not
ten) into this GPU's results file, keeping the rest; that part then names its own date and commit.
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

from common import BenchStopped, command_output, environment, run_program, say, slug, tool
from results_schema import SCHEMA, ResultsError, load_results, load_sweep, validate

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
FIGURES = HERE / "figures"
BASELINE = "02_basic_sweep"
HEAT_STAGE = "07_heat_equation"  # stages from 07 on step the heat equation in time: see heat_bench.py
# What the book's model counts (bytes loaded from global memory, as requested through L1) and
# what actually crosses the DRAM interface after the caches.
NCU_METRICS = ["l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "dram__bytes_read.sum", "dram__bytes_write.sum"]


def gpu_present(build):
    probe = subprocess.run([str(build / f"stage_{BASELINE}_solution"), "--as-test", "--check-only", "--n", "3"],
                           capture_output=True, text=True)
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
    say(f"No GPU here: {why}.")
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


def profile(program, stage, n, ncu):
    """Measured OP/B from one run under Nsight Compute, or (None, why)."""
    cmd = [ncu, "--clock-control", "none", "--metrics", ",".join(NCU_METRICS), "-k", "regex:stencil", "-c", "1",
           "--csv", "--page", "raw", str(program), "--n", str(n), "--check-only"]
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


def stop_on_sigterm(signum, frame):
    """SIGTERM (what `timeout` sends) stops the alternatives as Ctrl-C does."""
    raise KeyboardInterrupt


def main(root, build, stages, exercise_state, argv):
    ap = argparse.ArgumentParser(prog="course.py bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="128,256,512", help="grid sizes (default %(default)s)")
    ap.add_argument("--reps", type=int, default=None,
                    help="timed repetitions per size (default 50; 20 with --sweep)")
    ap.add_argument("--sweep", action="store_true",
                    help="instead: stages 02 and 06 at every N from 64 to 1024, %% of copy against N")
    ap.add_argument("--no-ncu", action="store_true", help="skip the Nsight Compute measurements")
    ap.add_argument("--no-alternatives", action="store_true", help="skip CuPy/PyTorch")
    ap.add_argument("--no-heat", action="store_true", help="skip stages 07 and 08 (the heat equation, temporal blocking)")
    ap.add_argument("--no-many-gpus", action="store_true", help="skip stage 09's scaling over the GPUs")
    ap.add_argument("--only-08", action="store_true",
                    help="only stage 08 against stage 07, replacing that part of this GPU's results file")
    a = ap.parse_args(argv)
    if a.reps is not None and not 1 <= a.reps <= 100000:
        ap.error(f"--reps must be between 1 and 100000, got {a.reps}")
    if a.sweep:
        import sweep
        present, why = gpu_present(build)
        if not present:
            return draw_shipped(why, RESULTS / "sweep", load_sweep,
                                lambda doc, name: sweep.draw(doc, FIGURES / name, say))
        try:
            return sweep.run_sweep(root, build, a.reps or 20, environment(root), slug, RESULTS, FIGURES, say,
                                   run_program)
        except (BenchStopped, ResultsError) as e:
            say(f"bench --sweep: {e}")
            return 1
    a.reps = a.reps or 50
    if a.only_08:
        return only_fused(root, build, a.reps)
    if not re.fullmatch(r"\d+(,\d+)*", a.n):
        ap.error(f"--n expects sizes like 128,256,512, got '{a.n}'")
    sizes = [int(x) for x in a.n.split(",")]

    present, why = gpu_present(build)
    if not present:
        return draw_shipped(why) | draw_shipped_many_gpus()

    # The one-sweep 3D stages: not 01 (the 1D study), nor 07 onward (the heat equation, below).
    stages3d = [s for s in stages if (build / f"stage_{s}_solution").exists()
                and s != "01_discretization" and s < HEAT_STAGE]
    jobs = [(s, "solution") for s in stages3d]
    for s in stages3d:
        state, _ = exercise_state(s)
        if state != "not attempted":
            jobs.append((s, "exercise"))
    doc = {"schema": SCHEMA, "gpu": None, **environment(root), "sizes": sizes, "runs": [], "profiles": [],
           "profile_note": None, "convergence": None, "alternatives": [], "heat": None}

    try:
        with tempfile.TemporaryDirectory() as tmp:
            records = Path(tmp) / "runs.jsonl"
            for number, (stage, impl) in enumerate(jobs, 1):
                say(f"[{number}/{len(jobs)}] {stage} ({impl}), N = {a.n}")
                run_program([build / f"stage_{stage}_{impl}", "--n", a.n, "--reps", a.reps, "--json", records],
                            f"{stage} ({impl})")
            doc["runs"] = [json.loads(line) for line in records.read_text().splitlines()]
            doc["gpu"] = doc["runs"][0]["device"]

            study = build / "stage_01_discretization_solution"
            if study.exists():
                say("stage 01: the convergence study")
                out = Path(tmp) / "study.jsonl"
                run = subprocess.run([str(study), "--json", str(out)], capture_output=True, text=True)
                if run.returncode == 0 and out.exists():
                    doc["convergence"] = json.loads(out.read_text().splitlines()[-1])
                else:
                    say(f"  the stage 01 program failed (exit {run.returncode}); no convergence data\n{run.stdout}")

            heat = build / f"stage_{HEAT_STAGE}_solution"
            if heat.exists() and not a.no_heat:
                from heat_bench import measure, measure_fused
                doc["heat"] = measure(heat, a.n, a.reps, Path(tmp))
                fused = build / "stage_08_temporal_blocking_solution"
                if fused.exists():
                    doc["heat"]["fused"] = measure_fused(heat, fused, a.reps, Path(tmp))
    except BenchStopped as e:
        say(str(e))
        return 1

    ncu = None if a.no_ncu else tool("ncu")
    if ncu is None:
        doc["profile_note"] = "skipped (--no-ncu)" if a.no_ncu else "Nsight Compute (ncu) is not installed"
        say(f"measured OP/B: {doc['profile_note']}")
    else:
        n = max(sizes)
        for number, stage in enumerate(stages3d, 1):
            say(f"[ncu {number}/{len(stages3d)}] {stage} (solution), N = {n}")
            p, why = profile(build / f"stage_{stage}_solution", stage, n, ncu)
            if p is None:
                doc["profile_note"] = why
                say(f"  {why}; carrying on without measured OP/B")
                break
            doc["profiles"].append(p)

    if not a.no_alternatives:
        # The last and the only optional part: stopped (Ctrl-C, or `timeout`), the bench still
        # writes and draws everything measured before it.
        from alternatives import measure
        previous = signal.signal(signal.SIGTERM, stop_on_sigterm)
        try:
            measure(sizes, a.reps, doc["runs"], say, records=doc["alternatives"])
        except KeyboardInterrupt:
            say(f"bench: stopped while measuring the CuPy/PyTorch alternatives; writing the results with the "
                f"{len(doc['alternatives'])} measured before")
        finally:
            signal.signal(signal.SIGTERM, previous)

    try:
        validate(doc)
    except ResultsError as e:
        say(f"bench: the results do not validate: {e}")
        return 1
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{slug(doc['gpu'])}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    say(f"\nwrote {path.relative_to(root)}")
    summary(doc)
    say("\nfigures:")
    status = draw(doc, slug(doc["gpu"]))
    if not a.no_many_gpus:
        status |= many_gpus(root, build, a.reps)
    return status


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
    path = RESULTS / f"{slug(fused[0]['device'])}.json"
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    try:
        doc = load_results(path)
    except (OSError, ValueError, ResultsError) as e:
        say(f"bench --only-08: {shown} cannot take the new part ({e}): run the whole bench first")
        return 1
    if not doc.get("heat"):
        say(f"bench --only-08: {shown} has no heat-equation part: run the whole bench first")
        return 1
    doc["heat"]["fused"] = fused
    doc["heat"]["fused_run"] = environment(root)
    validate(doc)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    say(f"\nwrote {shown} (stage 08's part)")
    from heat_bench import summary as heat_summary
    heat_summary(doc["heat"])
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
