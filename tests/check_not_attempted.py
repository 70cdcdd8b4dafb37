#!/usr/bin/env python3
"""An untouched skeleton must say so: its program, run as a test, exits 77 (SKIP) with "not
attempted" and where to start, on any machine, before it looks for a GPU. A skeleton that runs
as if attempted would fail its exercise tests on a GPU and say nothing useful.

usage: check_not_attempted.py REPO_ROOT STAGE PROGRAM [STAGE PROGRAM ...]
Stages whose skeleton no longer carries the marker (the learner has started) are passed over."""
import subprocess
import sys
from pathlib import Path

from check_exercise_regions import split  # the one definition of the skeleton's marker lines


def main():
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        raise SystemExit(__doc__)
    root = Path(sys.argv[1])
    problems, checked = [], 0
    for stage, program in zip(sys.argv[2::2], sys.argv[3::2]):
        if split(root / "chapters" / stage / "stencil.cu")[2] == 0:
            print(f"{stage}: attempted (its marker is gone): passed over")
            continue
        checked += 1
        run = subprocess.run([program, "--as-test", "--check-only", "--n", "5"], capture_output=True, text=True,
                             timeout=60)
        out = run.stdout + run.stderr
        if run.returncode != 77 or "not attempted" not in out or f"chapters/{stage}/" not in out:
            problems.append(f"{stage}: expected exit 77 saying it is not attempted and where to start, got exit "
                            f"{run.returncode}:\n{out.strip()}")
    for p in problems:
        print(p)
    print(f"{checked} untouched skeleton(s) checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
