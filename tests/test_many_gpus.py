#!/usr/bin/env python3
"""Stage 09's tests that need more than one run of its program, or none at all.

usage: test_many_gpus.py errors PROGRAM      the argument errors (no GPU needed: they come first)
       test_many_gpus.py mpi PROGRAM         two MPI ranks (mpirun -np 2), checked and compared with stage 07
       test_many_gpus.py timeout PROGRAM     a rank that never exchanges: the others report a timeout, exit 1
       test_many_gpus.py skip MESSAGE        prints SKIP: MESSAGE and exits 77 (the stage was not built)
Exit 77 (SKIP) with the reason where the machine lacks what the test needs."""
import os
import re
import shutil
import subprocess
import sys

# Never NVLink multicast (NVLS): point-to-point needs none, and a shared machine must not use it.
ENV = dict(os.environ, NCCL_NVLS_ENABLE="0", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def run(cmd, timeout=600):
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout)
    out = r.stdout + r.stderr
    print(out[-6000:])
    return r.returncode, out


def expect(code, out, want_code, *parts):
    ok = code == want_code and all(p in out for p in parts)
    if not ok:
        print(f"FAIL: expected exit {want_code} and {parts}, got exit {code}")
    return ok


def gpu_count(program):
    code, out = run([program, "--as-test", "--check-only", "--n", "3"])
    if code == 77:
        print(out.strip())
        sys.exit(77)
    smi = shutil.which("nvidia-smi")
    listed = subprocess.run([smi, "-L"], capture_output=True, text=True).stdout if smi else ""
    return len([l for l in listed.splitlines() if l.startswith("GPU ")]) or 1


def errors(program):
    ok = True
    code, out = run([program, "--gpus", "4", "--n", "5"])
    ok &= expect(code, out, 2, "more ranks than planes", "3 state planes")
    code, out = run([program, "--gpus", "2", "--n", "33,3"])
    ok &= expect(code, out, 2, "more ranks than planes")
    code, out = run([program, "--jacobi"])
    ok &= expect(code, out, 2, "--jacobi belongs to stage 07")
    code, out = run([program, "--time-only"])
    ok &= expect(code, out, 2, "--time-only belongs to stages 07-08")
    code, out = run([program, "--fuse", "2"])
    ok &= expect(code, out, 2, "stage 09_many_gpus advances one step per pass", "fusing steps is stage 08")
    code, out = run([program, "--n", "70000"])
    ok &= expect(code, out, 2, "--n 70000 is too large")
    code, out = run([program, "--gpus", "0"])
    ok &= expect(code, out, 2, "--gpus expects")
    code, out = run([program, "--timeout", "-1"])
    ok &= expect(code, out, 2, "--timeout expects")
    code, out = run([program, "--help"])
    ok &= expect(code, out, 0, "--gpus G", "mpirun -np")
    return 0 if ok else 1


def mpi(program):
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if mpirun is None:
        print("SKIP: no mpirun here: install an MPI (apt-get install openmpi-bin libopenmpi-dev) and rebuild")
        return 77
    if gpu_count(program) < 2:
        print("SKIP: two MPI ranks need two GPUs; this machine has one")
        return 77
    ok = True
    for bc in ("dirichlet", "neumann", "periodic"):
        # N = 4 is the smallest grid with two state planes, one for each rank
        code, out = run([mpirun, "-np", "2", "-x", "NCCL_NVLS_ENABLE", program, "--as-test", "--check-only",
                         "--n", "4,5,17,64,129", "--steps", "7", "--bc", bc])
        ok &= expect(code, out, 0, "one MPI process per rank", "identical, bit for bit")
    return 0 if ok else 1


def timeout(program):
    if gpu_count(program) < 2:
        print("SKIP: a stalled rank needs a second rank, and that a second GPU; this machine has one")
        return 77
    code, out = run([program, "--gpus", "2", "--stall-rank", "1", "--timeout", "5", "--n", "33", "--check-only"],
                    timeout=120)
    return 0 if expect(code, out, 1, "TIMEOUT") and re.search(r"did not finish within 5 s", out) else 1


if __name__ == "__main__":
    mode, arg = sys.argv[1], sys.argv[2]
    if mode == "skip":
        print("SKIP: " + " ".join(sys.argv[2:]))
        sys.exit(77)
    sys.exit({"errors": errors, "mpi": mpi, "timeout": timeout}[mode](arg))
