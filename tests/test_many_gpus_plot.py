#!/usr/bin/env python3
"""Stage 09's benchmark on the CPU: the jobs it would run, the scaling arithmetic, the schema, and
the figure, from tests/fixtures/many_gpus.json (made-up numbers, labelled as such)."""
import copy
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plots"))
import many_gpus as m  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


doc = m.validate(json.loads((ROOT / "tests" / "fixtures" / "many_gpus.json").read_text()))

# The jobs: strong scaling at N = 1024 on 1..G GPUs, weak scaling at equal cells per GPU, the big size.
jobs = m.jobs(2, 7)
check([(k, g) for k, g, _ in jobs] == [("strong", 1), ("strong", 2), ("weak", 1), ("weak", 2), ("big", 2)], "job list")
check(all(o[:2] == ["--gpus", str(g)] and "--reps" in o and o[o.index("--reps") + 1] == ("3" if k == "big" else "7")
          for k, g, o in jobs), "each job names its GPU count and reps (the big size's at least 3, a quarter)")
check(m.big_reps(20) == 5 and m.big_reps(4) == 3, "the big size runs a quarter of the repetitions, at least 3")
check([k for k, _, _ in m.jobs(1, 7)] == ["strong", "weak"], "one GPU: no size that needs two")
check([m.weak_size(g) for g in (1, 2, 4, 8)] == [512, 644, 812, 1020], f"weak sizes {[m.weak_size(g) for g in (1, 2, 4, 8)]}")
check(all(m.weak_size(g) % 4 == 0 and abs((m.weak_size(g) - 2) ** 3 / 510 ** 3 / g - 1) < 0.01 for g in range(1, 9)),
      "weak sizes are multiples of 4 within 1% of g times the cells")

# The arithmetic: speed-up t(1)/t(g) over passing runs only; efficiency likewise.
speed = m.strong_speedup(doc)
check(set(speed) == {1, 2} and abs(speed[2] - 2000 / 1025) < 1e-12, f"strong speed-up {speed}")
eff = m.weak_efficiency(doc)
check(abs(eff[2] - (643 ** 3 / 2 / 262) / (510 ** 3 / 250)) < 1e-12 and eff[1] == 1, f"weak efficiency {eff}")
check(2 in m.series(doc, "big"), "the big run")

# The schema rejects what the figure could not use.
for mutate, why in [(lambda d: d.update(schema="x"), "schema"), (lambda d: d.pop("gpu"), "no gpu"),
                    (lambda d: d["runs"][0].update(kind="huge"), "kind"),
                    (lambda d: d["runs"][0].pop("us_per_step"), "passing run without its time"),
                    (lambda d: d["runs"][1].update(ranks="2"), "ranks not an int")]:
    bad = copy.deepcopy(doc)
    mutate(bad)
    try:
        m.validate(bad)
        check(False, f"validate accepted a file with a bad {why}")
    except m.ManyGpusError:
        pass

# The figure, and the command line's refusal of a bad file.
with tempfile.TemporaryDirectory() as tmp:
    path = m.draw(doc, tmp)
    check(path.name == "scaling.png" and path.stat().st_size > 10000, "scaling.png drawn")
    bad = Path(tmp) / "bad.json"
    bad.write_text('{"schema": "nope"}')
    check(m.main(["draw", str(bad), "--out", tmp]) == 2, "draw refuses a bad file with exit 2")
    summary = []
    m.summary(doc, summary.append)
    check(any("1.95x" in line for line in summary) and any("FAILED" in line for line in summary), "summary table")

print(f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
