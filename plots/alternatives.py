"""The same sweep through what a Python user would reach for instead of a hand-written kernel,
with the course's coefficients, checked against a float64 reference and timed like the stages
(CUDA events, warm-up, an L2 flush before each repetition, the median).

Used by bench.py; on its own: python3 plots/alternatives.py [N ...]"""
import statistics
import sys


def course_coefficients(seed=8):
    """harness/grid.cpp's random_coefficients(seed), bit for bit (splitmix64)."""
    mask = (1 << 64) - 1
    state = seed ^ 0xC0EFF1C1E27

    def next_u64():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return z ^ (z >> 31)

    import numpy as np
    w = []
    while len(w) < 7:
        candidate = np.float32(0.1 + 0.9 * ((next_u64() >> 11) * 2.0 ** -53))
        if all(abs(x - candidate) >= np.float32(0.05) for x in w):
            w.append(candidate)
    return [float(x) for x in w]


def weights_3x3x3(c):
    """The seven coefficients in a 3×3×3 correlation kernel: [di+1][dj+1][dk+1]."""
    import numpy as np
    w = np.zeros((3, 3, 3), dtype=np.float32)
    w[1, 1, 1], w[1, 1, 0], w[1, 1, 2], w[1, 0, 1], w[1, 2, 1], w[0, 1, 1], w[2, 1, 1] = c
    return w


def reference_interior(x, c):
    """float64 sweep of the interior, the same formula as harness/reference.cpp."""
    x = x.astype("float64")
    return (c[0] * x[1:-1, 1:-1, 1:-1] + c[1] * x[1:-1, 1:-1, :-2] + c[2] * x[1:-1, 1:-1, 2:]
            + c[3] * x[1:-1, :-2, 1:-1] + c[4] * x[1:-1, 2:, 1:-1] + c[5] * x[:-2, 1:-1, 1:-1] + c[6] * x[2:, 1:-1, 1:-1])


def torch_slicing(x, c):
    out = x.clone()  # boundary cells keep the input, as in the course
    out[1:-1, 1:-1, 1:-1] = (c[0] * x[1:-1, 1:-1, 1:-1] + c[1] * x[1:-1, 1:-1, :-2] + c[2] * x[1:-1, 1:-1, 2:]
                             + c[3] * x[1:-1, :-2, 1:-1] + c[4] * x[1:-1, 2:, 1:-1]
                             + c[5] * x[:-2, 1:-1, 1:-1] + c[6] * x[2:, 1:-1, 1:-1])
    return out


def candidates(c, say):
    """(name, make(x) -> function computing the sweep of x, interior(result) -> interior view)."""
    found = []
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cudnn.allow_tf32 = False  # float32 arithmetic, as the stages do
            torch.backends.cuda.matmul.allow_tf32 = False
            w = torch.tensor(weights_3x3x3(c), device="cuda")[None, None]
            compiled = torch.compile(torch_slicing)
            found += [
                ("PyTorch slicing (eager)", lambda x: torch_slicing(x, c), lambda y: y[1:-1, 1:-1, 1:-1]),
                ("PyTorch slicing (torch.compile)", lambda x: compiled(x, c), lambda y: y[1:-1, 1:-1, 1:-1]),
                ("PyTorch conv3d", lambda x: torch.nn.functional.conv3d(x[None, None], w)[0, 0], lambda y: y),
            ]
        else:
            say("  PyTorch sees no GPU: skipping it")
    except ImportError:
        say("  PyTorch is not installed: skipping it")
    try:
        import cupy
        from cupyx.scipy import ndimage
        wc = cupy.asarray(weights_3x3x3(c))
        found.append(("CuPy ndimage.correlate", lambda x: ndimage.correlate(x, wc, mode="constant"),
                      lambda y: y[1:-1, 1:-1, 1:-1]))
    except ImportError:
        say("  CuPy is not installed: skipping it")
    return found


def measure(sizes, reps, runs, say, warmup=5, records=None):
    """One record per (alternative, N) for the results file, appended to `records` (a new list if
    None) as each is measured, so that a caller stopped half way keeps those already done."""
    import numpy as np
    c = course_coefficients()
    copy = {r["n"]: r["copy_gbps"] for r in runs
            if r["stage"] == "02_basic_sweep" and r["implementation"] == "solution" and "copy_gbps" in r}
    records = [] if records is None else records
    found = candidates(c, say)
    if not found:
        return records
    import torch
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1, device="cuda")
    for n in sizes:
        host = np.random.default_rng(n).uniform(0.5, 1.5, (n, n, n)).astype(np.float32)
        expected = reference_interior(host, c)
        x_torch = torch.from_numpy(host).cuda()
        for name, fn, interior in found:
            say(f"  {name}, N = {n}")
            x = x_torch
            if name.startswith("CuPy"):
                import cupy
                x = cupy.asarray(host)
            got = interior(fn(x))
            got = got.cpu().numpy() if hasattr(got, "cpu") else got.get()
            err = np.abs(got.astype(np.float64) - expected) / np.abs(expected)
            max_err = float(np.nanmax(err)) if np.isfinite(err).all() else float("inf")
            record = {"name": name, "n": n, "check": {"ok": max_err <= 1e-5, "max_rel_err": max_err
                                                      if max_err != float("inf") else None}}
            if record["check"]["ok"]:
                for _ in range(warmup):
                    fn(x)
                times = []
                for _ in range(reps):
                    flush.fill_(1.0)
                    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    fn(x)
                    stop.record()
                    stop.synchronize()
                    times.append(start.elapsed_time(stop))
                median = statistics.median(times)
                gbps = 8.0 * (n - 2) ** 3 / (median * 1e-3) * 1e-9
                record.update({"time_ms": {"median": median, "min": min(times), "max": max(times), "reps": reps},
                               "gbps": gbps, "fraction_of_copy": gbps / copy[n] if n in copy else None})
            else:
                say(f"    wrong result: max relative error {max_err:.2e}")
            records.append(record)
        torch.cuda.empty_cache()
    return records


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [256]
    for r in measure(sizes, 20, [], print):
        print(r)
