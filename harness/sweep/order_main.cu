// The program of stage 10: stages 02-06's one-sweep runner (sweep/run.cuh) for the star stencil of
// order R. For each order in --order and each kernel in --kernel, the sizes in --n: checked against
// the float64 CPU reference of order R, timed, and reported with the kernel's textbook OP/B at R.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/cli.h"
#include "common/program.h"
#include "sweep/order.h"
#include "sweep/order_stage.h"
#include "sweep/report.h"
#include "sweep/run.cuh"

namespace {

const OrderKernel kAllKernels[] = {OrderKernel::Basic, OrderKernel::Tiled, OrderKernel::Fast};

struct OrderOptions {
    std::vector<unsigned> orders = {4};
    std::vector<OrderKernel> kernels = {OrderKernel::Basic, OrderKernel::Tiled, OrderKernel::Fast};
};

std::string parse_orders(const std::string& text, std::vector<unsigned>& orders) {
    orders.clear();
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
        unsigned long long R;
        if (!parse_whole(item, R)) return "--order expects orders like 4 or 1,2,3,4, got '" + text + "'";
        if (R < 1 || R > kMaxOrder)
            return "--order " + item + " is not available: R must be 1, 2, 3 or 4 (7, 13, 19 or 25 points)";
        if (std::find(orders.begin(), orders.end(), unsigned(R)) == orders.end()) orders.push_back(unsigned(R));
    }
    if (orders.empty() || text.back() == ',') return "--order expects orders like 4 or 1,2,3,4, got '" + text + "'";
    return "";
}

// Kept in the order basic, tiled, fast, so that the basic kernel's time is there for the others.
std::string parse_kernels(const std::string& text, std::vector<OrderKernel>& kernels) {
    const std::string bad = "--kernel expects basic, tiled, fast or all (or a list like basic,fast), got '" + text + "'";
    std::vector<bool> chosen(3, false);
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
        bool known = false;
        for (int n = 0; n < 3; ++n)
            if (item == order_kernel_name(kAllKernels[n]) || item == "all") chosen[size_t(n)] = known = true;
        if (!known) return bad;
    }
    if (text.empty() || text.back() == ',') return bad;
    kernels.clear();
    for (int n = 0; n < 3; ++n)
        if (chosen[size_t(n)]) kernels.push_back(kAllKernels[n]);
    return "";
}

std::string order_usage(const std::string& program) {
    std::string text = usage(program);
    const std::string what = "this stage's 3D 7-point stencil sweep";
    if (size_t at = text.find(what); at != std::string::npos)
        text.replace(at, what.size(), "this stage's 3D star stencil sweeps of order R");
    const std::string own =
        "  --order R[,R..]  stencil orders 1..4: R cells on each side, 6R+1 points  [4]\n"
        "  --kernel K[,K..] basic (Fig. 8.6), tiled (Fig. 8.12), fast, or all      [all]\n";
    if (size_t at = text.find("  --n "); at != std::string::npos) text.insert(at, own);
    return text;
}

RunRecord describe_run(const Gpu& g, unsigned N, unsigned R, OrderKernel k, const OrderKernelInfo& info,
                       const Resources& res, const DevicePeak& peak) {
    RunRecord r;
    r.device = g.prop.name;
    r.stage = kOrderStage.id;
    r.title = std::string(kOrderStage.title) + ", order " + std::to_string(R) + ", " + order_kernel_name(k) + " kernel";
    r.figure = info.figure;
    r.implementation = stage_is_solution() ? "solution" : "exercise";
    r.n = N;
    r.order = R;
    r.kernel_name = order_kernel_name(k);
    r.model = order_opb(k, R, info.tiles);
    r.resources = res;
    r.peak = peak;
    r.in_tile_dim = info.tiles.T;
    r.out_tile_dim = info.tiles.T ? info.tiles.T - 2 * R : 0;
    r.z_coarsening = info.tiles.Z ? info.tiles.Z : 1;
    return r;
}

// After the runs, when more than one kernel was timed: each kernel's median and its speed-up over
// the basic kernel, measured in this run.
void print_summary(const std::vector<RunRecord>& records, const std::vector<OrderKernel>& kernels) {
    std::map<std::pair<unsigned, unsigned>, std::map<std::string, const RunRecord*>> by;  // (R, N) -> kernel
    for (const RunRecord& r : records)
        if (r.timed) by[{r.order, r.n}][r.kernel_name] = &r;
    if (kernels.size() < 2 || by.empty()) return;
    std::printf("\nsummary: median ms, and in brackets the speed-up over the basic kernel in this run\n");
    std::printf("  R  points      N");
    for (OrderKernel k : kernels) std::printf("  %18s", order_kernel_name(k));
    std::printf("\n");
    for (const auto& [key, row] : by) {
        std::printf("%3u  %6u  %5u", key.first, 6 * key.first + 1, key.second);
        for (OrderKernel k : kernels) {
            auto it = row.find(order_kernel_name(k));
            if (it == row.end()) std::printf("  %18s", "-");
            else if (it->second->vs_basic > 0)
                std::printf("  %9.4f (%5.2fx)", it->second->kernel.median_ms, it->second->vs_basic);
            else std::printf("  %9.4f         ", it->second->kernel.median_ms);
        }
        std::printf("\n");
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::string program = program_name(argv[0]);
    OrderOptions oo;
    std::vector<const char*> rest;
    std::string err = split_args(argc, argv, {{"--order", true}, {"--kernel", true}},
                                 [&](const std::string& name, const std::string& value) {
                                     return name == "--order" ? parse_orders(value, oo.orders)
                                                              : parse_kernels(value, oo.kernels);
                                 },
                                 rest);
    Options o;
    if (err.empty()) err = parse_args(int(rest.size()), rest.data(), o);
    if (!err.empty()) {
        std::fprintf(stderr, "%s: %s\n(run with --help for the options)\n", program.c_str(), err.c_str());
        return kUsage;
    }
    return sweep_run::run_program(program, o, order_usage(program), kOrderStage.id, [&](const Gpu& g, FILE* json) {
        int status = kPass;
        DevicePeak peak = sweep_run::gpu_peak(g);
        std::vector<RunRecord> records;
        std::map<std::pair<unsigned, unsigned>, double> basic_ms;  // (R, N) -> the basic kernel's median
        for (unsigned R : oo.orders) {
            const StarCoefficients c = random_star_coefficients(o.seed, R);
            for (OrderKernel k : oo.kernels) {
                bool header = false;
                for (unsigned N : o.sizes) {
                    // The kernel's instance and chunk may depend on N (stage 10's fast kernel: N % 4, N's chunk).
                    const OrderKernelInfo info = kOrderStage.describe(k, R, N);
                    const Resources res = kernel_resources(g, info.kernel, info.block, info.dynamic_shared_bytes);
                    RunRecord r = sweep_run::run_size(
                        g, o, N, describe_run(g, N, R, k, info, res, peak),
                        [&](const float* in, float* out, cudaStream_t s) {
                            CUDA_CHECK(launch_stencil_order(in, out, N, c, R, k, s));
                        },
                        [&](const float* in, float* out) { poison_output_order(in, out, N, R); },
                        [&](const float* in, const float* out) {
                            return check_output_order(in, out, N, R, c, info.out_tiles);
                        });
                    if (r.timed && k == OrderKernel::Basic) basic_ms[{R, N}] = r.kernel.median_ms;
                    if (r.timed && basic_ms.count({R, N}) && r.kernel.median_ms > 0)
                        r.vs_basic = basic_ms[{R, N}] / r.kernel.median_ms;
                    if (!sweep_run::print_record(r, o, header, json)) status = kFail;
                    records.push_back(r);
                }
                std::printf("\n");
            }
        }
        print_summary(records, oo.kernels);
        return status;
    });
}
