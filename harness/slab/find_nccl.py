#!/usr/bin/env python3
"""Finds NCCL for stage 09's build; meson.build runs it.

usage: find_nccl.py NVCC
Prints three lines: the folder holding nccl.h, the library file, and where they were found; or
nothing (exit 0) when there is no NCCL. Searched in order: $NCCL_HOME (or $NCCL_ROOT), the CUDA
toolkit of NVCC, /usr/local and /usr, then the copy a Python install carries in
site-packages/nvidia/nccl (pip's nvidia-nccl-cu12/cu13, which PyTorch installs), which has only
include/nccl.h and lib/libnccl.so.2 (no libnccl.so): the build links that file by its full name."""
import glob
import os
import subprocess
import sys


def library(folder):
    for name in ("libnccl.so", "libnccl.so.2"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            return path
    return None


def candidates(nvcc):
    for var in ("NCCL_HOME", "NCCL_ROOT"):
        if os.environ.get(var):
            yield os.environ[var], f"${var}"
    import shutil
    nvcc = shutil.which(nvcc) if nvcc else None
    toolkit = os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else None
    if toolkit:
        yield toolkit, "the CUDA toolkit"
    yield "/usr/local", "/usr/local"
    yield "/usr", "/usr"


def python_copies():
    code = ("import sys, os\ntry:\n import nvidia.nccl as n\n print('\\n'.join(n.__path__))\nexcept Exception:\n pass")
    seen = set()
    for python in (sys.executable, "python3"):
        try:
            out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        for folder in out.split():
            if folder not in seen:
                seen.add(folder)
                yield folder


def main():
    nvcc = sys.argv[1] if len(sys.argv) > 1 else None
    for root, where in candidates(nvcc):
        for inc in ("include",):
            header = os.path.join(root, inc, "nccl.h")
            if not os.path.exists(header):
                continue
            for lib in ("lib64", "lib", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "targets/x86_64-linux/lib"):
                path = library(os.path.join(root, lib))
                if path:
                    print(os.path.dirname(header), path, where, sep="\n")
                    return
    for folder in python_copies():
        header = os.path.join(folder, "include", "nccl.h")
        libs = sorted(glob.glob(os.path.join(folder, "lib", "libnccl.so*")))
        if os.path.exists(header) and libs:
            print(os.path.dirname(header), libs[0], f"Python's {folder}", sep="\n")
            return


if __name__ == "__main__":
    main()
