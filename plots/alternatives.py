"""The same sweep through what a Python user would reach for instead of a hand-written kernel,
with the course's coefficients, checked against a float64 reference and timed like the stages
(CUDA events, warm-up, an L2 flush before each repetition, the median).

measure(): the 7-point stencil of stages 02-06 (R = 1), for doc["alternatives"].
measure_orders(): stage 10's star stencil of order R (6R + 1 points), with the weights that
harness/sweep/order.cpp draws (star_coefficients, bit for bit), for doc["high_order"]["alternatives"]:
PyTorch slicing (eager; torch.compile at ORDER_COMPILED only, each order being a compile of its
own) and CuPy's ndimage.correlate with the star as a (2R+1)³ kernel.

Used by bench.py; on its own: python3 plots/alternatives.py [N ...]"""
import statistics
import sys


def splitmix_uniform01(state):
    """harness/common/grid.h's uniform01: the endless sequence of splitmix64 draws from `state`,
    each uniform in [0, 1)."""
    mask = (1 << 64) - 1
    while True:
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        yield ((z ^ (z >> 31)) >> 11) * 2.0 ** -53


def distinct_weights(count, state, margin):
    """count float32 weights in [0.1, 1.0), each at least `margin` from those before it, drawn as
    the harness draws them."""
    import numpy as np
    draws = splitmix_uniform01(state)
    w = []
    while len(w) < count:
        candidate = np.float32(0.1 + 0.9 * next(draws))
        if all(abs(x - candidate) >= margin for x in w):
            w.append(candidate)
    return [float(x) for x in w]


def course_coefficients(seed=8):
    """harness/common/grid.cpp's random_coefficients(seed), bit for bit (splitmix64)."""
    import numpy as np
    return distinct_weights(7, seed ^ 0xC0EFF1C1E27, np.float32(0.05))


def star_coefficients(R, seed=8):
    """harness/sweep/order.cpp's random_star_coefficients(seed, R), bit for bit: 6R + 1 distinct
    float weights in [0.1, 1.0), at least 0.02f apart; w[0] the centre's, w[1 + 6(d-1) + dir] the
    neighbour's at distance d in direction dir (k-1, k+1, j-1, j+1, i-1, i+1)."""
    import numpy as np
    return distinct_weights(6 * R + 1, (seed ^ 0x57A25EED ^ (R << 40)) & ((1 << 64) - 1), np.float32(0.02))


def star_terms(R, w):
    """[(weight, (di, dj, dk))] of the star of order R, in the harness's order of weights."""
    terms = [(w[0], (0, 0, 0))]
    for d in range(1, R + 1):
        for direction, offset in enumerate([(0, 0, -d), (0, 0, d), (0, -d, 0), (0, d, 0), (-d, 0, 0), (d, 0, 0)]):
            terms.append((w[1 + 6 * (d - 1) + direction], offset))
    return terms


def _shifted(x, R, offset):
    """The interior (R cells in from each face) of x, moved by offset (di, dj, dk)."""
    n = x.shape[0]
    return x[tuple(slice(R + o, n - R + o) for o in offset)]


def star_reference(x, R, w):
    """float64 sweep of order R over the interior, as harness/sweep/order.cpp's star_point."""
    x = x.astype("float64")
    out = None
    for weight, offset in star_terms(R, w):
        term = weight * _shifted(x, R, offset)
        out = term if out is None else out + term
    return out


def star_kernel(R, w):
    """The star as a dense (2R+1)³ correlation kernel: [R+di][R+dj][R+dk]."""
    import numpy as np
    k = np.zeros((2 * R + 1,) * 3, dtype=np.float32)
    for weight, (di, dj, dk) in star_terms(R, w):
        k[R + di, R + dj, R + dk] = weight
    return k


def torch_star(x, R, w):
    """PyTorch slicing of order R: the boundary (R cells wide) keeps the input."""
    out = x.clone()
    n = x.shape[0]
    acc = None
    for weight, offset in star_terms(R, w):
        term = weight * x[R + offset[0]:n - R + offset[0], R + offset[1]:n - R + offset[1],
                          R + offset[2]:n - R + offset[2]]
        acc = term if acc is None else acc + term
    out[R:n - R, R:n - R, R:n - R] = acc
    return out


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


def _flush_buffer():
    import torch
    return torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4 + 1, device="cuda")


def _time(fn, x, reps, warmup, flush):
    """The stages' way: warm-up, then an L2 flush and CUDA events around each repetition."""
    import torch
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
    return {"median": median, "min": min(times), "max": max(times), "reps": reps}


def _compare(got, expected):
    """The largest relative error of got (a GPU array's interior) against the float64 expected."""
    import numpy as np
    got = got.cpu().numpy() if hasattr(got, "cpu") else got.get()
    err = np.abs(got.astype(np.float64) - expected) / np.abs(expected)
    return float(np.nanmax(err)) if np.isfinite(err).all() else float("inf")


def _check_record(max_err):
    return {"ok": max_err <= 1e-5, "max_rel_err": max_err if max_err != float("inf") else None}


def measure(sizes, reps, runs, say, warmup=5, records=None, check_sizes=None):
    """One record per (alternative, N) for the results file, appended to `records` (a new list if
    None) as each is measured, so that a caller stopped half way keeps those already done.
    check_sizes: the sizes checked against the float64 reference (None: all); at the others an
    alternative is timed if it passed at every checked size, and its record says so
    (check.checked false, checked_at)."""
    import numpy as np
    from common import unchecked
    c = course_coefficients()
    copy = {r["n"]: r["copy_gbps"] for r in runs
            if r["stage"] == "02_basic_sweep" and r["implementation"] == "solution" and "copy_gbps" in r}
    records = [] if records is None else records
    found = candidates(c, say)
    if not found:
        return records
    import torch
    flush = _flush_buffer()
    check_sizes = sorted(sizes) if check_sizes is None else sorted(check_sizes)
    passed = {name: True for name, _, _ in found}
    for n in sorted(sizes, key=lambda n: (n not in check_sizes, n)):  # the checked sizes first
        checking = n in check_sizes
        host = np.random.default_rng(n).uniform(0.5, 1.5, (n, n, n)).astype(np.float32)
        expected = reference_interior(host, c) if checking else None
        x_torch = torch.from_numpy(host).cuda()
        for name, fn, interior in found:
            say(f"  {name}, N = {n}" + ("" if checking else " (timed; checked at N = " + ", ".join(map(str, check_sizes)) + ")"))
            x = x_torch
            if name.startswith("CuPy"):
                import cupy
                x = cupy.asarray(host)
            if checking:
                record = {"name": name, "n": n, "check": _check_record(_compare(interior(fn(x)), expected))}
                passed[name] = passed[name] and record["check"]["ok"]
            else:
                record = unchecked({"name": name, "n": n}, passed[name], check_sizes)
            if record["check"]["ok"]:
                stats = _time(fn, x, reps, warmup, flush)
                gbps = 8.0 * (n - 2) ** 3 / (stats["median"] * 1e-3) * 1e-9
                record.update({"time_ms": stats, "gbps": gbps, "fraction_of_copy": gbps / copy[n] if n in copy else None})
            elif checking:
                say(f"    wrong result: max relative error {record['check']['max_rel_err'] or float('inf'):.2e}")
            records.append(record)
        torch.cuda.empty_cache()
    return records


ORDER_COMPILED = 4  # torch.compile at this order only: each order is a compile of its own


def order_candidates(R, w, say):
    """(name, make(x) -> the sweep of order R of x, interior(result)) for the libraries found."""
    found = []
    inner = lambda y: y[R:-R, R:-R, R:-R]  # noqa: E731
    try:
        import torch
        if torch.cuda.is_available():
            found.append(("PyTorch slicing (eager)", lambda x: torch_star(x, R, w), inner))
            if R == ORDER_COMPILED:
                compiled = torch.compile(torch_star, dynamic=False)
                found.append(("PyTorch slicing (torch.compile)", lambda x: compiled(x, R, w), inner))
    except ImportError:
        pass
    try:
        import cupy
        from cupyx.scipy import ndimage
        kernel = cupy.asarray(star_kernel(R, w))
        found.append(("CuPy ndimage.correlate", lambda x: ndimage.correlate(x, kernel, mode="constant"), inner))
    except ImportError:
        pass
    return found


def measure_orders(sizes, orders, reps, runs, say, warmup=5, records=None, check_sizes=None):
    """One record per (alternative, R, N) for doc["high_order"]["alternatives"], appended to
    records as measured. runs: stage 10's records, whose copy (copy_gbps at N) the fractions
    divide by. check_sizes as for measure()."""
    import numpy as np
    from common import unchecked
    records = [] if records is None else records
    try:
        import torch
        if not torch.cuda.is_available():
            say("  PyTorch sees no GPU: no alternatives of order R")
            return records
    except ImportError:
        say("  PyTorch is not installed: no alternatives of order R (the timing needs its CUDA events)")
        return records
    copy = {r["n"]: r["copy_gbps"] for r in runs if "copy_gbps" in r}
    flush = _flush_buffer()
    check_sizes = sorted(sizes) if check_sizes is None else sorted(check_sizes)
    for R in orders:
        w = star_coefficients(R)
        found = order_candidates(R, w, say)
        passed = {name: True for name, _, _ in found}
        for n in sorted(sizes, key=lambda n: (n not in check_sizes, n)):
            checking = n in check_sizes
            host = np.random.default_rng(n).uniform(0.5, 1.5, (n, n, n)).astype(np.float32)
            expected = star_reference(host, R, w) if checking else None
            x_torch = torch.from_numpy(host).cuda()
            for name, fn, interior in found:
                say(f"  {name}, R = {R}, N = {n}" + ("" if checking else " (timed only)"))
                x = x_torch
                if name.startswith("CuPy"):
                    import cupy
                    x = cupy.asarray(host)
                if checking:
                    record = {"name": name, "order": R, "n": n, "check": _check_record(_compare(interior(fn(x)), expected))}
                    passed[name] = passed[name] and record["check"]["ok"]
                else:
                    record = unchecked({"name": name, "order": R, "n": n}, passed[name], check_sizes)
                if record["check"]["ok"]:
                    stats = _time(fn, x, reps, warmup, flush)
                    gbps = 8.0 * (n - 2 * R) ** 3 / (stats["median"] * 1e-3) * 1e-9
                    record.update({"time_ms": stats, "gbps": gbps,
                                   "fraction_of_copy": gbps / copy[n] if n in copy else None})
                elif checking:
                    say(f"    wrong result: max relative error {record['check']['max_rel_err'] or float('inf'):.2e}")
                records.append(record)
            del x_torch
            torch.cuda.empty_cache()
    return records


if __name__ == "__main__":
    sizes = [int(a) for a in sys.argv[1:]] or [256]
    for r in measure(sizes, 20, [], print):
        print(r)
