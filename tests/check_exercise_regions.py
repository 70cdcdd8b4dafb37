#!/usr/bin/env python3
"""A skeleton (chapters/NN/...) and its solution (solutions/NN/...) must differ only inside the
marked EXERCISE regions, plus the two "I AM NOT DONE" marker lines of the skeleton.

usage: check_exercise_regions.py REPO_ROOT STAGE [STAGE ...]
Checks every file a stage has in both folders; exits 1 naming each difference. A skeleton whose
marker lines are gone is a learner's work in progress, not the shipped skeleton: it is passed
over with a note, except in CI (CI set in the environment), where every skeleton must be as
shipped."""
import difflib
import os
import re
import sys
from pathlib import Path

BEGIN = re.compile(r"^\s*// ---- EXERCISE\b")
END = re.compile(r"^\s*// ---- END EXERCISE ----\s*$")
MARKER = re.compile(r"I_AM_NOT_DONE|I AM NOT DONE")


def split(path):
    """Returns (the lines outside regions with each region replaced by its BEGIN line,
    the list of region bodies, the number of marker lines)."""
    outside, regions, body, markers = [], [], None, 0
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if body is None and MARKER.search(line):
            markers += 1
        elif BEGIN.match(line):
            if body is not None:
                raise SystemExit(f"{path}:{number}: EXERCISE region opened inside another")
            outside.append(line)
            body = []
        elif END.match(line):
            if body is None:
                raise SystemExit(f"{path}:{number}: END EXERCISE without a region")
            regions.append(body)
            body = None
        elif body is not None:
            body.append(line)
        else:
            outside.append(line)
    if body is not None:
        raise SystemExit(f"{path}: EXERCISE region not closed")
    return outside, regions, markers


def check(root, stage):
    problems = []
    exercise_dir, solution_dir = root / "chapters" / stage, root / "solutions" / stage
    files = sorted(p.relative_to(solution_dir) for p in solution_dir.rglob("*") if p.is_file())
    if not files:
        return [f"{stage}: no files in {solution_dir}"]
    for rel in files:
        exercise, solution = exercise_dir / rel, solution_dir / rel
        if not exercise.exists():
            problems.append(f"{exercise}: missing (the solution has it)")
            continue
        ex_out, ex_regions, ex_markers = split(exercise)
        so_out, so_regions, so_markers = split(solution)
        if ex_markers == 0 and not os.environ.get("CI"):
            print(f"{exercise}: attempted (its marker is gone), so it is your work now: not compared")
            continue
        if ex_markers != 2:
            problems.append(f"{exercise}: expected the two 'I AM NOT DONE' marker lines, found {ex_markers}")
        if so_markers != 0:
            problems.append(f"{solution}: the solution must not carry the 'I AM NOT DONE' marker")
        if not so_regions:
            problems.append(f"{solution}: no EXERCISE regions")
        if len(ex_regions) != len(so_regions):
            problems.append(f"{stage}/{rel}: {len(ex_regions)} regions in the skeleton, {len(so_regions)} in the solution")
        if ex_out != so_out:
            diff = difflib.unified_diff(so_out, ex_out, str(solution), str(exercise), lineterm="", n=1)
            problems.append(f"{stage}/{rel}: differs outside the EXERCISE regions:\n" + "\n".join(diff))
        for n, (a, b) in enumerate(zip(ex_regions, so_regions), 1):
            if a == b:
                problems.append(f"{stage}/{rel}: EXERCISE region {n} is the same in skeleton and solution")
    return problems


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    root = Path(sys.argv[1])
    problems = [p for stage in sys.argv[2:] for p in check(root, stage)]
    for p in problems:
        print(p)
    print(f"{len(sys.argv) - 2} stage(s) checked, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
