#!/usr/bin/env python3
"""Finds NCCL for stage 09's build; meson.build runs it.

usage: find_nccl.py NVCC
Prints three lines: the folder holding nccl.h, the library file, and where they were found; or
nothing (exit 0) when there is no NCCL built for NVCC's CUDA major version. Searched in order:
$NCCL_HOME (or $NCCL_ROOT), the CUDA toolkit of NVCC, /usr/local and /usr, then the copy a Python
install carries in site-packages/nvidia/nccl (pip's nvidia-nccl-cu12/cu13, which PyTorch installs),
which has only include/nccl.h and lib/libnccl.so.2 (no libnccl.so): the build links the file by
its full path.

An NCCL is taken only when it was built for the CUDA major version of NVCC (`nvcc --version`): a
CUDA 12 build next to /usr/local's CUDA 13 NCCL would otherwise link CUDA 13's runtime. The
library says what it was built with ("NCCL version 2.28.9+cuda13.0", "... compiled with CUDA
12.9"); pip's copy also by its dist-info (nvidia_nccl_cu12-*); and nccl.h's NCCL_MAJOR/MINOR/PATCH
must match the library's version. A copy whose CUDA version cannot be told is skipped. Why each
copy was skipped goes to stderr (Meson keeps it in meson-logs/meson-log.txt)."""
import glob
import mmap
import os
import re
import shutil
import subprocess
import sys


def note(text):
    print(f"find_nccl.py: {text}", file=sys.stderr)


def toolkit_major(nvcc):
    """CUDA major version of NVCC from `nvcc --version` ("release 12.4, V12.4.131"), or None."""
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as error:
        note(f"cannot run {nvcc} --version: {error}")
        return None
    found = re.search(r"release (\d+)\.(\d+)", out)
    return int(found.group(1)) if found else None


# "NCCL version 2.28.9+cuda13.0" (the version string) or "NCCL version 2.32.3 compiled with CUDA 12.9".
BUILT_WITH = re.compile(rb"NCCL version (\d+)\.(\d+)\.(\d+)(?:[^\0\s]*\+cuda| compiled with CUDA )(\d+)\.(\d+)")


def library_build(path):
    """(NCCL version, CUDA major) the library file says it was built with, or None."""
    try:
        with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found = BUILT_WITH.search(data)
            if not found:
                return None
            return tuple(int(v) for v in found.group(1, 2, 3)), int(found.group(4))
    except (OSError, ValueError):
        return None


def header_version(header):
    try:
        text = open(header, errors="replace").read()
    except OSError:
        return None
    parts = [re.search(rf"#define\s+NCCL_{name}\s+(\d+)", text) for name in ("MAJOR", "MINOR", "PATCH")]
    return tuple(int(p.group(1)) for p in parts) if all(parts) else None


def pip_cuda_major(folder):
    """12 or 13 when site-packages holds the dist-info of nvidia-nccl-cu12 or -cu13 for FOLDER
    (site-packages/nvidia/nccl); None when there is none, or both (one overwrote the other)."""
    site = os.path.dirname(os.path.dirname(folder))
    majors = {int(m.group(1)) for info in glob.glob(os.path.join(site, "nvidia_nccl_cu*.dist-info"))
              for m in [re.match(r"nvidia_nccl_cu(\d+)-", os.path.basename(info))] if m}
    return majors.pop() if len(majors) == 1 else None


def check(header, lib, major, where, dist_major=None):
    """True when the pair is an NCCL built for CUDA MAJOR; otherwise says why not."""
    built = library_build(lib)
    lib_major = built[1] if built else dist_major
    if lib_major is None:
        note(f"skipped {lib} ({where}): cannot tell which CUDA it was built for")
        return False
    if dist_major is not None and lib_major != dist_major:
        note(f"skipped {lib} ({where}): built for CUDA {lib_major}, but its dist-info says cu{dist_major}")
        return False
    if lib_major != major:
        note(f"skipped {lib} ({where}): built for CUDA {lib_major}, the toolkit is CUDA {major}")
        return False
    header_v = header_version(header)
    if built and header_v and header_v != built[0]:
        note(f"skipped {lib} ({where}): the library is NCCL {'.'.join(map(str, built[0]))} but "
             f"{header} is {'.'.join(map(str, header_v))}")
        return False
    return True


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
    if nvcc:
        yield os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "the CUDA toolkit"
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
    nvcc = shutil.which(nvcc) if nvcc else None
    major = toolkit_major(nvcc) if nvcc else None
    if major is None:
        note(f"cannot tell the CUDA version of nvcc ({nvcc}): no NCCL taken")
        return
    for root, where in candidates(nvcc):
        header = os.path.join(root, "include", "nccl.h")
        if not os.path.exists(header):
            continue
        for lib in ("lib64", "lib", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu", "targets/x86_64-linux/lib",
                    "targets/sbsa-linux/lib"):
            path = library(os.path.join(root, lib))
            if path and check(header, path, major, where):
                print(os.path.dirname(header), path, f"{where}, for CUDA {major}", sep="\n")
                return
    for folder in python_copies():
        header = os.path.join(folder, "include", "nccl.h")
        libs = sorted(glob.glob(os.path.join(folder, "lib", "libnccl.so*")))
        if os.path.exists(header) and libs and check(header, libs[0], major, f"Python's {folder}",
                                                     pip_cuda_major(folder)):
            print(os.path.dirname(header), libs[0], f"Python's {folder}, for CUDA {major}", sep="\n")
            return
    note(f"no NCCL built for CUDA {major} found")


if __name__ == "__main__":
    main()
