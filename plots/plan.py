"""What `course.py bench` runs, part by part, how long each part should take, and the progress
lines it prints on the way ("[7/12] stage 07: the heat equation ... elapsed 8s, about 3 min left").

It imports only heat_bench (the heat equation's command lines) of plots/, and no GPU library,
so that the plan and its estimate can be tested without a GPU (tests/test_plots.py).

Two plans:
- the default, quick one (estimated 3m14s on an H100; it took 3m19s there, with PyTorch, CuPy
  and Nsight Compute installed): the same figures from fewer repetitions where the spread is
  small (QUICK_REPS; the shipped run's 20 repetitions matched 50 to 0.1%), the CPU check at the
  smaller sizes and --time-only at the largest (random state made on the GPU), whose records say
  where the same program and options were checked ("checked_at"); Nsight Compute profiles taken
  from one --time-only launch (no CPU check under ncu); stage 07's pictures from its float
  accuracy run, which is the pictures' run at N = 128.
- `--full` (estimated 11m40s; 8m30s without stage 10 and the alternatives, today's bench): the
  full measurement behind the shipped results: every size checked, 50 repetitions, the
  profiles from --check-only runs.

How the estimate is made: a per-part model, est(part) = programs started × PROCESS_S + the GPU's
time + the CPU's time.
- The GPU's time comes from the shipped H100 results (plots/results/<H100>.json): for each
  timed record, (warmup + reps) × the medians of everything the program times for it (the
  sweep, the loop, the CUDA graph, the copy, an L2 flush before each); for stage 10, which the
  shipped file lacks, multiples of stage 02's copy at that N.
- The CPU's time is per cell: the one-sweep check (random input, poison, reference, comparison)
  at ONE_SWEEP_CHECK_NS a cell; the heat equation's float64 reference at HEAT_UPDATE_NS a
  cell-update, at most kCheckBudget = 2.2e9 updates (harness/heat/runner.h), and HEAT_HOST_NS a
  cell for the random and exact states, the check and the analytic error; NumPy's float64
  reference for the alternatives at NUMPY_NS a cell and point.
- Fixed costs: Nsight Compute on one kernel (NCU_S), importing PyTorch and CuPy (LIBRARIES_S),
  torch.compile (COMPILE_FIRST_S, then COMPILE_S for each further shape), the figures (DRAW_S).
The constants were fitted to the wall time of single runs on an H100 (16 cores): stage 02 at
128-512 (6.2 s) and its check at 512 (5.4 s), stage 07 at 128 and 512 (21-27 s a pair with 50
repetitions; 1.1 s at 128 and 1.5 s at 512 --time-only with 10), its accuracy study (12.4 s),
stage 08's comparison (22 s a run), stage 10 checked at 256 and 512 (72 s), ncu (6.4 s with a
check at 512), and the quick plan's parts. While the bench runs, what is left is the estimate of
the parts to come scaled by how the parts done so far went against their estimates (0.5× to 2×).
"""
import json
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIPPED = HERE / "results" / "nvidia-h100-80gb-hbm3.json"
TARGET_S = 300  # the default plan must fit in 5 minutes on an H100

FULL_REPS = 50  # the programs' own default, and the full plan's
QUICK_REPS = {"one_sweep": 20, "heat": 10, "overhead": 20, "high_order": 20, "alternatives": 20}
WARMUP = 5
CHECK_BUDGET = 2.2e9  # harness/heat/runner.h: kCheckBudget, cell-updates checked on the CPU

PROCESS_S = 0.35         # start a program: CUDA context, allocations
ONE_SWEEP_CHECK_NS = 36  # a cell of a checked one-sweep run (random input, poison, reference, compare)
ORDER_POINT_NS = 0.2     # and each point of the star beyond the 7 of stages 02-06 (stage 10)
HEAT_UPDATE_NS = 3.2     # a cell-update of the heat equation's float64 reference (every core)
HEAT_HOST_NS = 65        # a cell of a checked heat run: random and exact states, the analytic error
NUMPY_NS = 4             # a cell and a point of NumPy's float64 reference (and the comparison)
NCU_S = 2.4              # Nsight Compute: start, replay one kernel for three metrics
LIBRARIES_S = 8          # import PyTorch and CuPy, create their contexts
COMPILE_FIRST_S = 20     # torch.compile's first compile (Inductor starting up)
COMPILE_S = 6            # each further shape or order it compiles
FLUSH_MS = 0.05          # the L2 flush before each timed repetition
DRAW_S = 10              # drawing every figure, printing the tables
CONVERGENCE_S = 1.5      # stage 01's study


# --- the parts ---------------------------------------------------------------------------------

class Part:
    """One line of the plan: key (what bench.py runs for it), title, the programs' arguments
    (a list of lists; the program's path first, as bench passes it), and the estimate in seconds."""

    def __init__(self, key, title, commands=(), seconds=0.0, **extra):
        self.key, self.title, self.commands, self.seconds = key, title, [list(c) for c in commands], seconds
        self.extra = extra

    def __repr__(self):
        return f"Part({self.key!r}, {self.title!r}, {self.seconds:.1f} s)"


def split_sizes(sizes, quick, smallest=False):
    """(sizes checked and timed, sizes timed with --time-only). Quick: the largest is only timed
    (or, with smallest, all but the smallest), the rest checked; one size is always checked."""
    sizes = sorted(set(sizes))
    if not quick or len(sizes) < 2:
        return sizes, []
    return (sizes[:1], sizes[1:]) if smallest else (sizes[:-1], sizes[-1:])


def csv(ns):
    return ",".join(str(n) for n in ns)


def reps_for(kind, reps, full):
    """The repetitions a kind of run gets: --reps when given, else 50 (--full) or QUICK_REPS."""
    if reps is not None:
        return reps
    return FULL_REPS if full else QUICK_REPS[kind]


# --- what the model knows of an H100 ------------------------------------------------------------

_shipped = None


def shipped():
    """The shipped H100 results (empty when missing or unreadable)."""
    global _shipped
    if _shipped is None:
        try:
            _shipped = json.loads(SHIPPED.read_text())
        except (OSError, ValueError):
            _shipped = {}
    return _shipped


def _copy_ms(n):
    """A device copy of one N³ float grid on an H100: shipped, or from 3 TB/s (read + write)."""
    for r in shipped().get("runs", []):
        if r["n"] == n and "copy_ms" in r:
            return r["copy_ms"]["median"]
    return 8 * n ** 3 / 3e12 * 1e3


def _median(r, key, default):
    return r[key]["median"] if isinstance(r.get(key), dict) else default


def one_sweep_seconds(stage, checked, timed_only, reps):
    """A one-sweep stage (02-06): the checks on the CPU, then the sweep and the copy timed."""
    s = PROCESS_S * (1 + bool(checked and timed_only))
    runs = {r["n"]: r for r in shipped().get("runs", []) if r["stage"] == stage}
    for n in checked:
        s += ONE_SWEEP_CHECK_NS * 1e-9 * n ** 3
    for n in [*checked, *timed_only]:
        sweep = _median(runs.get(n, {}), "time_ms", 2 * _copy_ms(n))
        s += (WARMUP + reps) * (sweep + _copy_ms(n) + 2 * FLUSH_MS) * 1e-3
    return s


def heat_record(part, **key):
    for r in (shipped().get("heat") or {}).get(part) or []:
        if all(r.get(k) == v for k, v in key.items()):
            return r
    return {}


def heat_seconds(n, steps, reps, checked=True, timed=True, like=None):
    """One heat-equation run at n: the reference's steps and the host's states when checked, the
    step, the loop, its graph and the copy timed when timed. like: the shipped record to time by."""
    s = 0.0
    if checked:
        s += HEAT_UPDATE_NS * 1e-9 * min(n ** 3 * steps, CHECK_BUDGET) + HEAT_HOST_NS * 1e-9 * n ** 3
    if timed:
        like = like or {}
        step = _median(like, "step_ms", _copy_ms(n))
        loop = _median(like, "loop_ms", step * steps)
        graph = _median(like, "graph_ms", loop)
        s += (WARMUP + reps) * (step + loop + graph + _copy_ms(n) + 4 * FLUSH_MS) * 1e-3
    return s


def accuracy_steps(n, record):
    """Steps to the end time at n: from the shipped record, else dt = r·h²/α with r = 1/8."""
    if record.get("steps"):
        return record["steps"]
    return int(0.02 / (0.125 / (n - 1) ** 2)) + 1


# --- the plans -----------------------------------------------------------------------------------

def main_plan(build, sizes, reps=None, full=False, one_sweep=(), convergence=True, heat=True, fused=True,
              high_order=True, ncu=True, alternatives=True, many_gpus=False):
    """The parts of `course.py bench` in order. build: the folder of the programs; sizes: --n;
    reps: --reps (None: the plan's own); one_sweep: [(stage, implementation)] of stages 02-06;
    the rest say which parts run. The default plan is the quick one; full=True is today's."""
    import heat_bench as hb  # the heat equation's command lines
    build = Path(build)
    parts = []
    biggest = max(sizes)
    r1 = reps_for("one_sweep", reps, full)
    checked, timed_only = split_sizes(sizes, quick=not full)
    for stage, impl in one_sweep:
        program = build / f"stage_{stage}_{impl}"
        commands = [[program, "--n", csv(checked), "--reps", r1]]
        if timed_only:
            commands.append([program, "--n", csv(timed_only), "--reps", r1, "--time-only"])
        parts.append(Part("one_sweep", f"stage {stage[:2]} ({impl}), N = {csv(sizes)}"
                          + (f", {csv(timed_only)} with --time-only" if timed_only else ""),
                          commands, one_sweep_seconds(stage, checked, timed_only, r1),
                          stage=stage, implementation=impl))
    if convergence:
        parts.append(Part("convergence", "stage 01: the convergence study",
                          [[build / "stage_01_discretization_solution"]], CONVERGENCE_S))
    if heat:
        rh, ro = reps_for("heat", reps, full), reps_for("overhead", reps, full)
        jobs = hb.jobs(csv(sizes), rh, quick=not full, overhead_reps=ro)
        parts.append(Part("heat", f"stage 07: the heat equation ({len(jobs)} runs)",
                          [[build / "stage_07_heat_equation_solution", *o] for _, _, o in jobs],
                          sum(PROCESS_S + job_seconds(part, o) for part, _, o in jobs),
                          reps=rh, overhead_reps=ro))
    if fused:
        rh = reps_for("heat", reps, full)
        jobs = hb.fused_jobs(rh, quick=not full)
        parts.append(Part("fused", f"stage 08 against stage 07 ({len(jobs)} runs)",
                          [[build / ("stage_07_heat_equation_solution" if stage == "07"
                                     else "stage_08_temporal_blocking_solution"), *o] for stage, _, o in jobs],
                          sum(PROCESS_S + job_seconds("fused", o, stage) for stage, _, o in jobs), reps=rh))
    if high_order:
        r10 = reps_for("high_order", reps, full)
        program = build / "stage_10_high_order_solution"
        base = [program, "--order", "1,2,3,4", "--kernel", "basic,tiled,fast"]
        if full:
            commands, checked10, timed10 = [[*base, "--n", csv(HIGH_ORDER_SIZES), "--reps", r10]], HIGH_ORDER_SIZES, []
        else:
            checked10, timed10 = HIGH_ORDER_SIZES[:1], HIGH_ORDER_SIZES[1:]
            commands = [[*base, "--n", csv(checked10), "--reps", r10],
                        [*base, "--n", csv(timed10), "--reps", r10, "--time-only"]]
        parts.append(Part("high_order", f"stage 10: order R = 1..4, three kernels, N = {csv(HIGH_ORDER_SIZES)}"
                          + (f" ({csv(timed10)} with --time-only)" if timed10 else ""), commands,
                          high_order_seconds(checked10, timed10, r10) + PROCESS_S * len(commands)))
    if ncu:
        stages = sorted({s for s, _ in one_sweep})
        how = ["--check-only"] if full else ["--time-only", "--reps", 1, "--warmup", 0]
        parts.append(Part("ncu", f"Nsight Compute: {len(stages)} profiles at N = {biggest}",
                          [[build / f"stage_{s}_solution", "--n", biggest, *how] for s in stages],
                          len(stages) * (NCU_S + (ONE_SWEEP_CHECK_NS * 1e-9 * biggest ** 3 if full else 0))))
    if alternatives:
        ra = reps_for("alternatives", reps, full)
        parts.append(Part("alternatives", "the CuPy and PyTorch alternatives (R = 1"
                          + (", and R = 1..4 beside stage 10)" if high_order else ")"), [],
                          alternatives_seconds(sizes, ra, full, high_order), reps=ra))
    parts.append(Part("draw", "the figures", [], DRAW_S))
    if many_gpus:
        parts.append(Part("many_gpus", "stage 09 on every GPU: scaling", [], 120))
    return parts


HIGH_ORDER_SIZES = [256, 512]  # stage 10: the figure at 512, the table at 256 too
HIGH_ORDER_ORDERS = (1, 2, 3, 4)


def high_order_seconds(checked, timed_only, reps):
    """Stage 10: 3 kernels × 4 orders; the check of order R costs about what a 7-point one does (its
    random input, poison and guards dominate), a little more per point; the kernels take from 1 to
    3 copies' time (the basic kernel at R = 4 the slowest)."""
    s = 0.0
    for R in HIGH_ORDER_ORDERS:
        for slow in (1 + 0.5 * R, 1 + 0.2 * R, 1.1):  # basic, tiled, fast: in copies
            for n in checked:
                s += (ONE_SWEEP_CHECK_NS + ORDER_POINT_NS * 6 * (R - 1)) * 1e-9 * n ** 3
            for n in [*checked, *timed_only]:
                s += (WARMUP + reps) * (_copy_ms(n) * (slow + 1) + 2 * FLUSH_MS) * 1e-3
    return s


def alternatives_seconds(sizes, reps, full, high_order=True):
    """The alternatives: the libraries, torch.compile (R = 1 at each size, R = 4 at the stage 10
    sizes), NumPy's float64 reference where they are checked (R = 1 at the checked sizes; every R
    at 256, and at 512 too with --full), and their timings (eager slicing about 3R+5 copies'
    time, the others about 2 to 3)."""
    checked, _ = split_sizes(sizes, quick=not full)
    s = LIBRARIES_S + COMPILE_FIRST_S + COMPILE_S * (len(sizes) - 1)
    for n in sizes:
        s += (WARMUP + reps) * _copy_ms(n) * (8 + 2 + 2 + 2) * 1e-3
    if not high_order:
        return s + sum(NUMPY_NS * 1e-9 * n ** 3 * 7 * 4 for n in checked)
    s += COMPILE_S * len(HIGH_ORDER_SIZES)
    s += sum(NUMPY_NS * 1e-9 * n ** 3 * 7 * 4 for n in checked)  # the reference and 3 comparisons
    s += sum(NUMPY_NS * 1e-9 * n ** 3 * ((6 * R + 1) + 4) for R in HIGH_ORDER_ORDERS
             for n in (HIGH_ORDER_SIZES if full else HIGH_ORDER_SIZES[:1]))
    for n in HIGH_ORDER_SIZES:
        s += sum((WARMUP + reps) * _copy_ms(n) * (3 * R + 5 + 3 + 3) * 1e-3 for R in HIGH_ORDER_ORDERS)
    return s


def job_seconds(part, options, stage="07"):
    """The model's seconds for one run of stage 07 or 08 with `options` (heat_bench's jobs), not
    counting its start."""
    from heat_bench import option
    sizes = [int(n) for n in option(options, "--n").split(",")]
    reps = int(option(options, "--reps", FULL_REPS))
    steps = int(option(options, "--steps", 100))
    bc, precision = option(options, "--bc", "dirichlet"), option(options, "--precision", "float")
    fuse = int(option(options, "--fuse", 1))
    total_s = 0.0
    for n in sizes:
        if part == "jacobi":
            total_s += heat_record("jacobi", n=n).get("time_ms", 0.5 * n ** 2) * 1e-3
            continue
        if part in ("accuracy", "snapshots"):
            steps = accuracy_steps(n, heat_record("accuracy", n=n, precision=precision))
        if part == "fused":
            like = heat_record("fused", n=n, fused_steps=fuse, stage="07_heat_equation" if stage == "07"
                               else "08_temporal_blocking")
        else:
            like = heat_record("overhead" if part == "overhead" else "runs", n=n, bc=bc, precision=precision)
        total_s += heat_seconds(n, steps, reps, checked="--time-only" not in options,
                                timed="--check-only" not in options, like=like)
    return total_s


def total(parts):
    return sum(p.seconds for p in parts)


# --- the progress lines --------------------------------------------------------------------------

def clock_text(seconds):
    """12s, 2m10s, 1h02m."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def about(seconds):
    """'about 3 min', 'about 40 s': an estimate, rounded as one."""
    if seconds < 90:
        return f"about {max(5, int(round(seconds / 5.0)) * 5)} s"
    return f"about {int(round(seconds / 60.0))} min"


class Progress:
    """Prints the plan with its estimate, then one line as each part starts: its number, title,
    the time since the start and about how long is left."""

    def __init__(self, parts, say, clock=time.monotonic, device="an H100"):
        self.parts, self.say, self.clock, self.device = parts, say, clock, device
        self.start_time = None
        self.done_estimate = 0.0
        self.index = 0

    def start(self, mode):
        self.start_time = self.clock()
        self.say(f"bench ({mode}): {len(self.parts)} parts, {about(total(self.parts))} on {self.device}:")
        for i, p in enumerate(self.parts, 1):
            self.say(f"  {i:2d}. {p.title:70} ~{clock_text(p.seconds)}")

    def left(self, elapsed):
        """Seconds left: the estimate of the parts not finished, scaled by how the finished ones
        went against their estimates (between 0.5× and 2×)."""
        rest = sum(p.seconds for p in self.parts[self.index - 1:]) if self.index else total(self.parts)
        if self.done_estimate > 0 and elapsed > 0:
            rest *= min(2.0, max(0.5, elapsed / self.done_estimate))
        return rest

    def begin(self, part):
        """Call as each part starts, in the plan's order."""
        number = self.parts.index(part) + 1
        self.done_estimate = sum(p.seconds for p in self.parts[:number - 1])
        self.index = number
        elapsed = self.clock() - self.start_time
        self.say(f"[{number}/{len(self.parts)}] {part.title} ... elapsed {clock_text(elapsed)}, "
                 f"{about(self.left(elapsed))} left")

    def finish(self):
        elapsed = self.clock() - self.start_time
        self.say(f"bench: done in {clock_text(elapsed)} (estimated {clock_text(total(self.parts))})")
        return elapsed
