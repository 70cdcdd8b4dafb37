// Stage 09 (many GPUs): its report, text and JSON (slab/report.h).
#include "slab/report.h"

#include <sstream>

std::string many_gpu_lines(const ManyGpuRecord& m, const HeatPlan& plan) {
    std::ostringstream s;
    s << "  ranks      " << m.ranks << (m.ranks == 1 ? " rank on 1 GPU" : " ranks, one GPU each") << ", "
      << (m.launch == "mpi" ? "one MPI process per rank (mpirun)" : "threads of one process (--gpus)") << "\n";
    for (const std::string& slab : m.slabs) s << "             " << slab << "\n";
    if (m.ranks == 1)
        s << "             (one rank: no neighbour to exchange with, except itself under periodic boundaries)\n";
    s << "  stage 07   " << m.compare_note << "\n";
    if (m.sampled)
        s << "  sampled    " << m.sampled_planes << " planes checked (every slab's first, middle and last plane, and "
          << "the domain's faces) against the float64 reference of those planes\n";
    if (m.heat.timed && plan.steps > 0) {
        double over = m.heat.loop.median_ms * 1e3 / plan.steps, serial = m.loop_serial.median_ms * 1e3 / plan.steps;
        s << "  overlap    " << fmt("%.2f", over) << " µs/step with the exchange beside the interior, "
          << fmt("%.2f", serial) << " µs/step after it: the overlap saves " << fmt("%.1f%%", 100 * (1 - over / serial))
          << "\n";
    }
    if (m.heat.timed) {
        double gbps = m.exchange.median_ms > 0 ? 2 * m.exchange_bytes / (m.exchange.median_ms * 1e-3) * 1e-9 : 0;
        s << "  exchange   " << fmt("%.0f", m.exchange_bytes) << " bytes sent (and as many received) per step by "
          << "the busiest rank; alone " << fmt("%.1f", m.exchange.median_ms * 1e3) << " µs = " << fmt("%.1f", gbps)
          << " GB/s in and out per GPU\n"
          << "             (no L2 flush between timed runs in stage 09: the copy and the step are timed alike)\n";
    }
    return s.str();
}

std::string to_json(const ManyGpuRecord& m, const HeatPlan& plan) {
    std::string base = to_json(m.heat);
    base.pop_back();  // the closing brace
    std::ostringstream s;
    s << base << ", \"ranks\": " << m.ranks << ", \"launch\": " << json_string(m.launch)
      << ", \"check_mode\": " << json_string(m.sampled ? "sampled" : "full")
      << ", \"equal_to_07\": " << (m.equal_to_07 < 0 ? "null" : m.equal_to_07 ? "true" : "false");
    if (m.heat.timed) {
        s << ", \"exchange_ms\": " << json_stats(m.exchange) << ", \"exchange_bytes\": " << json_number(m.exchange_bytes);
        if (plan.steps > 0)
            s << ", \"loop_no_overlap_ms\": " << json_stats(m.loop_serial)
              << ", \"us_per_step\": " << json_number(m.heat.loop.median_ms * 1e3 / plan.steps)
              << ", \"us_per_step_no_overlap\": " << json_number(m.loop_serial.median_ms * 1e3 / plan.steps);
    }
    s << "}";
    return s.str();
}
