// The program of stage 01 (1D): print the book's example and the convergence study (on the CPU),
// then run the stage's derivative kernel on the GPU for every stencil at each size and check it
// against the CPU reference. Options and exit codes follow the 3D program (harness/sweep/main.cu).
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/cuda_check.h"
#include "common/program.h"
#include "fd1d/finite_difference.h"
#include "common/grid.h"
#include "fd1d/stage.h"

namespace {

// 1D grids are small next to 3D ones; this keeps the host check (three arrays) near 3 GB.
constexpr unsigned long long kMaxPoints1D = 1ull << 28;
const std::vector<unsigned> kDefaultSizes = {7, 1000003};

std::string usage1d(const std::string& program) {
    return "usage: " + program + " [options]\n"
           "Stage 01 (1D): prints the book's example (sin at 7 points, h = pi/6) and a convergence study of\n"
           "the 3-, 5- and 7-point central differences (first and second derivative, double and float,\n"
           "computed on the CPU), then runs this stage's derivative kernel on the GPU for all six stencils\n"
           "and checks it against a CPU reference (float64).\n\n"
           "  --n N[,N...]     numbers of grid points, 3 <= N <= " + std::to_string(kMaxPoints1D) +
           "        [7,1000003]\n"
           "  --seed S         seed for the random input                     [8]\n"
           "  --json FILE      append one JSON record (the convergence study) to FILE\n"
           "  --check-only     the GPU check only, without the study's tables\n"
           "  --study-only     the book's example and the study only, without the GPU\n"
           "  --as-test        exit 77 (skipped) without a GPU or when the exercise is not attempted\n"
           "  --reps, --warmup accepted like the 3D stages; this stage does not time its kernel\n"
           "  --help           this text\n\n"
           "exit codes: 0 passed, 1 wrong result or CUDA error, 2 bad arguments, 3 no usable GPU or not\n"
           "enough memory, 77 skipped (with --as-test) or exercise not attempted\n";
}

// The options that only the 1D program knows, or reads differently: --n (numbers of points,
// not a cube's edge) and --study-only. The rest go to parse_args (harness/common/cli.h).
struct Options1D {
    std::vector<unsigned> sizes = kDefaultSizes;
    bool study_only = false;
};

// Takes --n and --study-only out of argv; the other arguments are kept, in order, for parse_args.
std::string split_args1d(int argc, char** argv, Options1D& o1, std::vector<const char*>& rest) {
    return split_args(argc, argv, {{"--n", true}, {"--study-only", false}},
                      [&](const std::string& name, const std::string& value) -> std::string {
                          if (name == "--study-only") return o1.study_only = true, "";
                          return parse_size_list(value, kMaxPoints1D, "checking needs 12 bytes of host memory a "
                                                 "point, so 1D grids stop near 3 GB", o1.sizes);
                      },
                      rest);
}

// `f` and `out` each sit between two guard zones. A thread past the end of `out` changes a guard
// (reported even without compute-sanitizer); one reading past the ends of `f` reads NaN.
constexpr size_t kGuardFloats = size_t(1) << 16;
constexpr unsigned char kGuardByte = 0xA5, kNaNByte = 0xFF;

bool guards_intact(const DeviceBuffer& out, size_t n) {
    std::vector<unsigned char> guard(4 * kGuardFloats);
    for (size_t offset : {size_t(0), kGuardFloats + n}) {
        CUDA_CHECK(cudaMemcpy(guard.data(), out.floats() + offset, guard.size(), cudaMemcpyDeviceToHost));
        if (std::any_of(guard.begin(), guard.end(), [](unsigned char b) { return b != kGuardByte; })) return false;
    }
    return true;
}

// All six stencils on one grid of n points; returns the checks of those that failed.
std::vector<DerivativeCheck> run_size(unsigned n, uint64_t seed, double& worst) {
    size_t padded = n + 2 * kGuardFloats;
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (8 * padded > free_bytes)
        throw MemoryShortage("N = " + std::to_string(n) + " needs " + std::to_string(8 * padded) +
                             " bytes of GPU memory, but only " + std::to_string(free_bytes) + " are free");

    std::vector<float> f(n), out(n), f_after(n);
    fill_random(f, seed * 1000003u + n);
    const float h = 1.0f / float(n - 1);  // the grid spans [0, 1]

    DeviceBuffer d_f(4 * padded), d_out(4 * padded);
    float* f_grid = d_f.floats() + kGuardFloats;
    float* out_grid = d_out.floats() + kGuardFloats;
    CUDA_CHECK(cudaMemset(d_f.ptr, kNaNByte, 4 * padded));
    CUDA_CHECK(cudaMemcpy(f_grid, f.data(), 4 * size_t(n), cudaMemcpyHostToDevice));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));

    std::vector<DerivativeCheck> failed;
    worst = 0;
    for (int derivative = 1; derivative <= 2; ++derivative)
        for (int order = kMinOrder; order <= kMaxOrder; ++order) {
            std::fill(out.begin(), out.end(), poison_value());
            CUDA_CHECK(cudaMemset(d_out.ptr, kGuardByte, 4 * padded));
            CUDA_CHECK(cudaMemcpy(out_grid, out.data(), 4 * size_t(n), cudaMemcpyHostToDevice));
            CUDA_CHECK(launch_derivative(f_grid, out_grid, n, h, order, derivative, s));
            CUDA_CHECK(cudaStreamSynchronize(s));
            CUDA_CHECK(cudaMemcpy(out.data(), out_grid, 4 * size_t(n), cudaMemcpyDeviceToHost));
            DerivativeCheck r = check_derivative(f.data(), out.data(), n, h, derivative, order);
            r.guard_violated = !guards_intact(d_out, n);
            CUDA_CHECK(cudaMemcpy(f_after.data(), f_grid, 4 * size_t(n), cudaMemcpyDeviceToHost));
            r.input_modified = std::memcmp(f_after.data(), f.data(), 4 * size_t(n)) != 0;
            worst = std::max(worst, r.worst);
            if (!r.ok()) failed.push_back(r);
        }
    CUDA_CHECK(cudaStreamDestroy(s));
    return failed;
}

}  // namespace

int main(int argc, char** argv) {
    std::string program = program_name(argv[0]);
    Options1D o1;
    std::vector<const char*> rest;
    Options o;
    std::string err = split_args1d(argc, argv, o1, rest);
    if (err.empty()) err = parse_args(int(rest.size()), rest.data(), o);
    if (err.empty() && o.time_only) err = "--time-only is an option of the one-sweep stages (02-06), not of stage 01";
    if (!err.empty()) {
        std::fprintf(stderr, "%s: %s\n(run with --help for the options)\n", program.c_str(), err.c_str());
        return kUsage;
    }
    if (o.help) {
        std::printf("%s", usage1d(program).c_str());
        return kPass;
    }
    if (o1.study_only && o.check_only) {
        std::fprintf(stderr, "%s: --study-only and --check-only exclude each other\n", program.c_str());
        return kUsage;
    }

    JsonLog json(nullptr, fclose);
    if (!open_json_log(o.json_path, program, json)) return kUsage;

    // The study: deterministic, on the CPU, the same for the exercise and the solution.
    if (!o.check_only || json) {
        ConvergenceStudy study = convergence_study();
        if (!o.check_only) {
            std::printf("%s\n%s\n%s\n%s\n", book_example_text(study.book).c_str(), error_table_text(study, 1).c_str(),
                        error_table_text(study, 2).c_str(), measured_orders_text(study).c_str());
        }
        if (json) {
            std::fprintf(json.get(), "%s\n", study_json(study, "CPU").c_str());
            std::fflush(json.get());
        }
    }
    if (o1.study_only) return kPass;

    if (!kStageAttempted) return report_not_attempted(kStage1D.id);

    return run_reporting_errors(
        [&]() -> int {
            int status = kPass;
            int details_left = 2;
            Gpu g;
            std::string why;
            if (!open_gpu(g, why)) {
                std::printf("%s%s\n", o.as_test ? "SKIP: " : "", why.c_str());
                return o.as_test ? kSkip : kNoGpu;
            }
            std::printf("%s: %s (%s), %s, on %s\n", kStage1D.id, kStage1D.title, kStage1D.figure,
                        stage_is_solution() ? "solution" : "exercise", g.prop.name);
            std::printf("GPU check of the 6 stencils (first and second derivative; 3, 5, 7 points) against the CPU "
                        "reference;\na point fails when |got - expected| > %.0e x sum_j |w_j f[i+j]|\n",
                        kTolerance1D);
            std::printf("          N  check  worst |error| / tolerance\n");
            for (unsigned n : o1.sizes) {
                double worst = 0;
                std::vector<DerivativeCheck> failed = run_size(n, o.seed, worst);
                if (std::isfinite(worst))
                    std::printf("  %9u  %s   %.3g\n", n, failed.empty() ? "ok  " : "FAIL", worst);
                else
                    std::printf("  %9u  FAIL   infinite (NaN in the output)\n", n);
                // The details of the first two failures, once: the same mistake fails every stencil
                // and most sizes, and one report of it is enough to find it.
                std::string also;
                for (const DerivativeCheck& r : failed) {
                    if (details_left > 0) {
                        std::printf("%s", describe_failure(r).c_str());
                        --details_left;
                    } else {
                        also += std::string(also.empty() ? "" : ", ") + derivative_name(r.derivative) + " " +
                                std::to_string(2 * r.order + 1) + "-point";
                    }
                }
                if (!also.empty()) std::printf("  also wrong: %s\n", also.c_str());
                if (!failed.empty()) status = kFail;
                std::fflush(stdout);
            }
            return status;
        },
        o.as_test, program, "checking N points needs about 12·N bytes of RAM");
}
