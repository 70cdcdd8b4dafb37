// Stage 09 (many GPUs): its options and --help (slab/cli.h).
#include "slab/cli.h"

namespace {

const std::vector<ProgramOption> kManyGpuOptions = {
    {"--gpus", true}, {"--n", true}, {"--sampled", false}, {"--timeout", true}, {"--stall-rank", true},
    {"--no-07-compare", false},
};

}  // namespace

std::string parse_many_gpu_args(int argc, const char* const* argv, ManyGpuOptions& m, HeatOptions& h, Options& o,
                                std::vector<const char*>& rest) {
    std::string err = split_args(argc, argv, kManyGpuOptions,
        [&](const std::string& name, const std::string& value) -> std::string {
            unsigned long long n = 0;
            double x = 0;
            if (name == "--gpus") {
                if (!parse_whole(value, n) || n < 1 || n > 64) return "--gpus expects a GPU count from 1 to 64, got '" + value + "'";
                m.gpus = unsigned(n);
            } else if (name == "--n") {
                m.given_n = true;
                return parse_size_list(value, kManyGpuMaxN, "a plane of N² cells and N/8 blocks along j must stay "
                                       "inside the kernel's grid limits", o.sizes);
            } else if (name == "--sampled") {
                m.sampled = true;
            } else if (name == "--timeout") {
                if (!parse_real(value, x) || x <= 0) return "--timeout expects a positive number of seconds, got '" + value + "'";
                m.timeout = x;
            } else if (name == "--stall-rank") {
                if (!parse_whole(value, n)) return "--stall-rank expects a rank, got '" + value + "'";
                m.stall_rank = int(n);
            } else if (name == "--no-07-compare") {
                m.compare_07 = false;
            }
            return "";
        },
        rest);
    if (!err.empty()) return err;
    std::vector<unsigned> sizes = o.sizes;
    err = parse_heat_args(int(rest.size()), rest.data(), h, o);
    o.sizes = sizes;  // parse_args never saw --n
    if (err.empty() && h.jacobi) err = "--jacobi belongs to stage 07: stage 09 runs the time loop on many GPUs";
    if (err.empty() && h.snapshots) err = "--snapshots belongs to stage 07 (its pictures come from one GPU)";
    if (err.empty() && o.time_only) err = "--time-only belongs to stages 07-08: stage 09 checks every run against stage 07";
    return err;
}

std::string many_gpu_usage(const std::string& program) {
    std::string text = heat_usage(program);
    text = text.substr(0, text.find("  --jacobi"));
    return text +
           "  --n N[,N...]       grid sizes; stage 09 takes N up to 65535 (64-bit offsets) [128]\n"
           "  --gpus G           run G ranks, one GPU each, from this one process (threads, ncclCommInitAll)\n"
           "                     [1]; under mpirun each process is one rank instead (mpirun -np R " + program + ")\n"
           "  --sampled          check sampled planes (every slab's first and last, and the domain's faces)\n"
           "                     against the float64 reference of those planes, instead of the whole grid;\n"
           "                     the default past N = " + std::to_string(kFullCheckMaxN) + "\n"
           "  --timeout S        seconds an exchange or NCCL's set-up may take before the run stops   [120]\n"
           "  --no-07-compare    do not compare the result with stage 07's single-GPU solution\n"
           "  --stall-rank R     (for the tests) rank R never takes part in the exchange\n\n"
           "  --reps R           timed repetitions; the median is reported               [50]\n"
           "  --warmup W         untimed runs before timing                              [5]\n"
           "  --seed S           seed for the random initial state                       [8]\n"
           "  --json FILE        append one JSON record per size to FILE (rank 0)\n"
           "  --check-only       check only, do not time\n"
           "  --as-test          exit 77 (skipped) without a GPU, with too few GPUs, or when the exercise is\n"
           "                     not attempted\n"
           "  --help             this text\n\n"
           "exit codes: 0 passed, 1 wrong result, or a CUDA, NCCL or MPI error, or an exchange that timed out;\n"
           "2 bad arguments (more ranks than planes included); 3 no usable GPU, fewer GPUs than ranks, or not\n"
           "enough memory; 77 skipped (with --as-test) or exercise not attempted\n";
}
