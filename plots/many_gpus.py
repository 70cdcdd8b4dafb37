#!/usr/bin/env python3
"""Stage 09 in the benchmark: strong and weak scaling over the GPUs of one machine, the overlap of
the exchange, and a size that fits only across several GPUs; one figure, scaling.png.

    python3 plots/many_gpus.py measure [--build build] [--gpus G] [--reps 20]
        runs build/stage_09_many_gpus_solution with --gpus 1..G (one process, NCCL) and writes
        plots/results/many_gpus-<gpu>.json, then draws plots/figures/<gpu>/scaling.png
    python3 plots/many_gpus.py draw RESULTS.json [--out DIR]

What it runs (float, Dirichlet, 100 steps, each record checked like every run):
    strong   N = 1024 on 1, 2, ... G GPUs: the speed-up over one GPU (aim: 1.95x on two)
    weak     the same cells per GPU: N = 512 on one GPU, the multiple of 4 with (N-2)^3 nearest
             g * 510^3 on g GPUs: the efficiency, updates/s per GPU over those of one GPU
    overlap  every record times the loop with the exchange beside the interior and after it
    big      N = 2600 on all G GPUs (140 GB in float: two H200s), when G >= 2; --big 0 skips it;
             a quarter of the repetitions (at least 3), since each runs for seconds
`python3 course.py bench` runs `measure` when stage 09 is built and the machine has two or more
GPUs. The schema (validate) is checked by tests/test_many_gpus_plot.py on a fixture.
"""
import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCHEMA = "many_gpus/1"
STRONG_N, WEAK_N, BIG_N, STEPS = 1024, 512, 2600, 100
FIGURE = "scaling.png"
PREFIX = "many_gpus-"  # results/many_gpus-<gpu>.json, beside the main results files


class ManyGpusError(Exception):
    pass


def weak_size(gpus, base=WEAK_N, multiple=4):
    """The multiple of 4 whose (N-2)^3 state cells come nearest `gpus` times those of `base`.
    A multiple of 4 because the kernel's rows then start 16-byte aligned, as at N = 512: at an odd
    N it reads one cell per thread and runs at about 60% of a copy, which would measure the kernel,
    not the scaling."""
    want = gpus * (base - 2) ** 3
    guess = round(want ** (1 / 3)) + 2
    near = [n for n in range(guess - multiple, guess + multiple + 1) if n % multiple == 0]
    return min(near, key=lambda n: abs((n - 2) ** 3 - want))


def jobs(gpus, reps, big=BIG_N):
    """(kind, gpus, options) for every run, in order."""
    out = [("strong", g, ["--n", str(STRONG_N)]) for g in range(1, gpus + 1)]
    out += [("weak", g, ["--n", str(weak_size(g))]) for g in range(1, gpus + 1)]
    if gpus >= 2 and big:
        out.append(("big", gpus, ["--n", str(big)]))
    common = ["--steps", str(STEPS), "--warmup", "2", "--bc", "dirichlet", "--precision", "float"]
    return [(kind, g, ["--gpus", str(g), *opts, "--reps", str(big_reps(reps) if kind == "big" else reps), *common])
            for kind, g, opts in out]


def big_reps(reps):
    """The big size's loop of STEPS steps takes seconds, so its median needs fewer repetitions."""
    return max(3, reps // 4)


def measure(program, gpus, reps, say=print, big=BIG_N):
    """Runs every job; returns the results document (not yet written)."""
    runs = []
    todo = jobs(gpus, reps, big)
    with tempfile.TemporaryDirectory() as tmp:
        for number, (kind, g, options) in enumerate(todo, 1):
            say(f"[09 {number}/{len(todo)}] {kind} scaling: {' '.join(options[:4])}")
            log = Path(tmp) / f"{number}.jsonl"
            run = subprocess.run([str(program), *options, "--json", str(log)], capture_output=True, text=True)
            if run.returncode not in (0, 1):
                say(f"  stopped with exit {run.returncode}: not recorded\n{(run.stdout + run.stderr)[-2000:]}")
                continue
            for line in log.read_text().splitlines() if log.exists() else []:
                record = json.loads(line)
                record["kind"] = kind
                runs.append(record)
    if not runs:
        raise ManyGpusError("no stage 09 run produced a record")
    return {"schema": SCHEMA, "gpu": runs[0]["device"], "gpus": gpus, "runs": runs}


REQUIRED = {"kind": str, "n": int, "ranks": int, "launch": str, "check": dict, "steps": int}


def validate(doc):
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ManyGpusError(f"not a stage 09 results file (schema must be {SCHEMA!r})")
    for key, kind in (("gpu", str), ("gpus", int), ("runs", list), ("date", str), ("commit", str)):
        if not isinstance(doc.get(key), kind):
            raise ManyGpusError(f"'{key}' must be a {kind.__name__}")
    for n, r in enumerate(doc["runs"]):
        for key, kind in REQUIRED.items():
            if not isinstance(r.get(key), kind):
                raise ManyGpusError(f"runs[{n}].{key} must be a {kind.__name__}")
        if r["kind"] not in ("strong", "weak", "big"):
            raise ManyGpusError(f"runs[{n}].kind must be strong, weak or big, not {r['kind']!r}")
        if r["check"].get("ok") and not all(isinstance(r.get(k), (int, float)) for k in ("us_per_step", "us_per_step_no_overlap")):
            raise ManyGpusError(f"runs[{n}]: a passing run needs us_per_step and us_per_step_no_overlap")
    return doc


def series(doc, kind):
    """{ranks: record} of the passing, timed runs of one kind."""
    return {r["ranks"]: r for r in doc["runs"] if r["kind"] == kind and r["check"]["ok"] and "us_per_step" in r}


def strong_speedup(doc):
    runs = series(doc, "strong")
    if 1 not in runs:
        return {}
    return {g: runs[1]["us_per_step"] / r["us_per_step"] for g, r in sorted(runs.items())}


def weak_efficiency(doc):
    """Updates per second per GPU on g GPUs over those on one: t(1) / t(g) where the cells per GPU
    are equal, and exact where rounding N to a multiple of 4 leaves them a little apart."""
    runs = series(doc, "weak")
    if 1 not in runs:
        return {}
    def per_gpu(g, r):
        return (r["n"] - 2) ** 3 / g / r["us_per_step"]
    return {g: per_gpu(g, r) / per_gpu(1, runs[1]) for g, r in sorted(runs.items())}


def summary(doc, say=print):
    say(f"\nStage 09, many GPUs ({doc['gpu']} x{doc['gpus']}): µs per step of {STEPS}, overlapped and not")
    say(f"{'kind':7} {'GPUs':>4} {'N':>5} {'µs/step':>9} {'no overlap':>10} {'G upd/s':>8} {'vs 1 GPU':>8} "
        f"{'exchange':>9} {'MB':>6} {'GB/s':>6}")
    speed, eff = strong_speedup(doc), weak_efficiency(doc)
    for r in doc["runs"]:
        if not r["check"]["ok"] or "us_per_step" not in r:
            say(f"{r['kind']:7} {r['ranks']:4d} {r['n']:5d}  check FAILED or not timed")
            continue
        ratio = speed.get(r["ranks"]) if r["kind"] == "strong" else eff.get(r["ranks"]) if r["kind"] == "weak" else None
        updates = (r["n"] - 2) ** 3 / (r["us_per_step"] * 1e-6) * 1e-9
        say(f"{r['kind']:7} {r['ranks']:4d} {r['n']:5d} {r['us_per_step']:9.1f} {r['us_per_step_no_overlap']:10.1f} "
            f"{updates:8.1f} {'' if ratio is None else f'{ratio:7.2f}' + ('x' if r['kind'] == 'strong' else ' '):>8} "
            f"{exchange_line(r)}")


def exchange_line(r):
    """The exchange alone: µs, MB sent by the busiest rank, GB/s in and out of one GPU (as the program reports)."""
    ms, sent = (r.get("exchange_ms") or {}).get("median"), r.get("exchange_bytes") or 0
    if not ms or not sent:
        return f"{'-':>9} {'-':>6} {'-':>6}"
    return f"{ms * 1e3:7.1f}µs {sent / 1e6:6.2f} {2 * sent / (ms * 1e-3) * 1e-9:6.1f}"


def draw(doc, out_dir):
    """scaling.png: strong-scaling speed-up, weak-scaling efficiency, and the overlap; returns its path."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.8), layout="constrained")
    speed, eff = strong_speedup(doc), weak_efficiency(doc)
    most = max([doc["gpus"], *speed, *eff, 1])
    a.plot([1, most], [1, most], color="0.6", ls="--", label="ideal")
    if speed:
        a.plot(list(speed), list(speed.values()), "o-", color="#1f77b4", label=f"N = {STRONG_N}")
        for g, s in speed.items():
            a.annotate(f"{s:.2f}x", (g, s), textcoords="offset points", xytext=(6, -12), fontsize=9)
    a.set(xlabel="GPUs", ylabel="speed-up over one GPU", title="strong scaling (same grid)")
    a.legend()
    if eff:
        b.plot(list(eff), [100 * e for e in eff.values()], "s-", color="#2ca02c")
        for g, e in eff.items():
            b.annotate(f"{100 * e:.0f}%", (g, 100 * e), textcoords="offset points", xytext=(6, -12), fontsize=9)
    b.axhline(100, color="0.6", ls="--")
    b.set(xlabel="GPUs", ylabel="efficiency: updates/s per GPU vs one GPU, %", ylim=(0, 110),
          title=f"weak scaling (the cells of N = {WEAK_N} per GPU)")
    strong = series(doc, "strong")
    xs = sorted(strong)
    width = 0.38
    c.bar([x - width / 2 for x in xs], [strong[x]["us_per_step"] for x in xs], width, color="#1f77b4",
          label="exchange beside the interior")
    c.bar([x + width / 2 for x in xs], [strong[x]["us_per_step_no_overlap"] for x in xs], width, color="#ff7f0e",
          label="exchange after the step")
    for x in xs:
        c.annotate(f"{strong[x]['us_per_step']:.0f}", (x - width / 2, strong[x]["us_per_step"]), ha="center",
                   textcoords="offset points", xytext=(0, 3), fontsize=9)
        c.annotate(f"{strong[x]['us_per_step_no_overlap']:.0f}", (x + width / 2, strong[x]["us_per_step_no_overlap"]),
                   ha="center", textcoords="offset points", xytext=(0, 3), fontsize=9)
    c.set(xlabel="GPUs", ylabel="µs per step", title=f"the overlap, N = {STRONG_N}", xticks=xs)
    c.legend()
    for ax in (a, b):
        ax.set_xticks(range(1, most + 1))
    big = series(doc, "big")
    note = "".join(f";  N = {r['n']} on {g} GPUs: {r['us_per_step'] / 1e3:.2f} ms/step" for g, r in big.items())
    fig.suptitle(f"Stage 09, many GPUs: {doc['gpu']}  ·  {doc['date']}  ·  commit {doc['commit']}{note}",
                 fontsize=11)
    path = out_dir / FIGURE
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--build", default=str(HERE.parent / "build"))
    m.add_argument("--gpus", type=int, default=0, help="GPUs to scale to (default: all of them)")
    m.add_argument("--reps", type=int, default=20)
    m.add_argument("--big", type=int, default=BIG_N, help="the size that needs several GPUs (0: skip)")
    d = sub.add_parser("draw")
    d.add_argument("results")
    d.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from common import environment, slug
    if a.command == "draw":
        try:
            doc = validate(json.loads(Path(a.results).read_text()))
        except (OSError, ValueError, ManyGpusError) as e:
            print(f"many_gpus.py: {a.results}: {e}")
            return 2
        print(draw(doc, a.out or HERE / "figures" / slug(doc["gpu"])))
        return 0
    program = Path(a.build) / "stage_09_many_gpus_solution"
    if not program.exists():
        print(f"many_gpus.py: {program} was not built (stage 09 needs NCCL; see meson setup's output)")
        return 2
    gpus = a.gpus or int(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU "))
    doc = measure(program, max(gpus, 1), a.reps, big=a.big)
    env = environment(HERE.parent)
    doc.update(date=env["date"], commit=env["commit"], nvcc=env["nvcc"], driver=env["driver"])
    validate(doc)
    path = HERE / "results" / f"{PREFIX}{slug(doc['gpu'])}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {path}")
    summary(doc)
    print(draw(doc, HERE / "figures" / slug(doc["gpu"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
