"""What the measuring modules share: printing, running one measuring program, the record of the
machine and the tree a run came from, and the file name a GPU's results go under.

Standard library only; it imports no other module of plots/ (bench.py, heat_bench.py and
many_gpus.py import it)."""
import datetime
import os
import re
import shutil
import subprocess
from pathlib import Path


def say(text=""):
    print(text, flush=True)


class BenchStopped(Exception):
    """A program failed in a way that leaves nothing to record (a crash, bad arguments, no GPU)."""


def run_program(cmd, what, failure="gave wrong results"):
    """Runs one measuring program; True when it passed. Exit 1 (a wrong result) is recorded, and
    reported here, but not plotted: False. Any other exit raises BenchStopped."""
    run = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if run.returncode not in (0, 1):
        say(run.stdout + run.stderr)
        raise BenchStopped(f"bench: {what} stopped with exit {run.returncode}")
    if run.returncode == 1:
        say(f"  {what} {failure}; it is recorded but not plotted:\n{run.stdout}")
    return run.returncode == 0


def unchecked(record, ok, checked_at):
    """Marks a --time-only record (no CPU check at its own N): check.ok is whether the same program
    and options passed the check at the sizes checked_at, check.checked is false, and checked_at
    names those sizes (results_schema.py wants both). The figures plot a record whose ok is true."""
    record["check"] = {**{k: v for k, v in (record.get("check") or {}).items() if k != "checked"},
                       "ok": bool(ok), "checked": False}
    record["checked_at"] = sorted(set(checked_at))
    return record


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def tool(name):
    path = shutil.which(name) or f"/usr/local/cuda/bin/{name}"
    return path if Path(path).exists() else None


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def environment(root):
    nvcc = re.search(r"release [\d.]+, V([\d.]+)", command_output([tool("nvcc") or "nvcc", "--version"]))
    driver = command_output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]).splitlines()
    commit = command_output(["git", "-C", str(root), "rev-parse", "--short", "HEAD"])
    dirty = command_output(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"])
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        # A copy of the tree whose .git is missing or older than the tree (e.g. on a remote GPU
        # machine) names its commit in STENCIL_COMMIT, which wins over what git says.
        "commit": os.environ.get("STENCIL_COMMIT") or (commit + ("+changes" if dirty else "")) or "unknown",
        "nvcc": nvcc.group(1) if nvcc else "unknown",
        "driver": driver[0] if driver else "unknown",
    }
