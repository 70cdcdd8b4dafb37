#!/usr/bin/env python3
"""Measures stage 06's last design steps (chapters/06_roofline/README.md) in one run on this GPU:
the book's stages, then stage 06's float4 kernel built with other block shapes and z-chunks
(BLOCK_XxBLOCK_YxZ_CHUNK, Z planes per thread at every N; N must be divisible by 4 for that kernel).

usage: python3 plots/roofline_steps.py [--n 512] [--variants BXxBYxZ,...]   (after a build)
Prints a table: variant, median ms, % of the device-to-device copy, speed-up over stage 02."""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
DEFAULT = "32x8x16,32x8x8,32x8x6,32x8x4,32x8x3,32x8x2,32x4x4,32x16x4"


def run(program, n, json_path, label):
    subprocess.run([str(program), "--n", str(n), "--json", str(json_path)], check=True, stdout=subprocess.DEVNULL)
    record = json.loads(json_path.read_text().splitlines()[-1])
    record["label"] = label
    return record


def build_variant(bx, by, z, out):
    source = ROOT / "solutions" / "06_roofline" / "stencil.cu"
    cmd = ["nvcc", "-O3", "-std=c++17", "-arch=sm_90", "-lineinfo", f"-I{ROOT / 'harness'}",
           f'-DSTAGE_SOURCE="solutions/06_roofline/stencil.cu"', f"-DTRY_BLOCK_X={bx}", f"-DTRY_BLOCK_Y={by}",
           f"-DTRY_Z_CHUNK={z}", f"-DTRY_SMALL_Z={z}", str(source), str(BUILD / "libharness_runner.a"), str(BUILD / "libharness_core.a"),
           "-o", str(out)]
    subprocess.run(cmd, check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=512)
    p.add_argument("--variants", default=DEFAULT)
    a = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for stage in ["02_basic_sweep", "03_shared_tiling", "04_thread_coarsening", "05_register_tiling"]:
            rows.append(run(BUILD / f"stage_{stage}_solution", a.n, tmp / f"{stage}.json", stage))
        for v in a.variants.split(","):
            bx, by, z = (int(x) for x in v.split("x"))
            exe = tmp / f"v{v}"
            build_variant(bx, by, z, exe)
            rows.append(run(exe, a.n, tmp / f"{v}.json", f"06 float4, block {bx}x{by}, Z={z}"))
    base = rows[0]["time_ms"]["median"]
    print(f"\n{rows[0]['device']}, N = {a.n}")
    print(f"{'variant':34} {'median ms':>10} {'% copy':>7} {'vs 02':>6} {'regs':>5} {'occ':>5}")
    for r in rows:
        t = r["time_ms"]["median"]
        print(f"{r['label']:34} {t:10.4f} {100 * r['fraction_of_copy']:6.1f}% {base / t:5.2f}x "
              f"{r['resources']['registers']:5d} {100 * r['resources']['occupancy']:4.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
