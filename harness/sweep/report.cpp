#include "sweep/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/grid.h"

size_t RunRecord::points() const {
    if (order == 0) return interior_cells(n);
    return n <= 2 * order ? 0 : size_t(n - 2 * order) * (n - 2 * order) * (n - 2 * order);
}

Rates rates(const RunRecord& r) {
    double points = double(r.points());
    double seconds = r.kernel.median_ms * 1e-3;
    Rates x{};
    if (!r.timed || seconds <= 0) return x;
    x.points_per_s = points / seconds;
    x.gflops = r.flops() * points / seconds * 1e-9;
    x.gbps = 8.0 * points / seconds * 1e-9;
    x.copy_gbps = 2.0 * 4.0 * double(grid_cells(r.n)) / (r.copy.median_ms * 1e-3) * 1e-9;
    x.fraction_of_copy = x.gbps / x.copy_gbps;
    return x;
}

std::string report_header(const RunRecord& r) {
    std::ostringstream s;
    s << "stage " << r.stage << " (" << r.implementation << ") - " << r.title << ", PMPP " << r.figure << "\n"
      << "  device     " << r.device << "\n";
    if (r.order)
        s << "  order      R = " << r.order << ": " << 6 * r.order + 1 << " points, " << r.flops()
          << " FLOPs per point; the " << r.kernel_name << " kernel\n";
    s << "  kernel     " << r.resources.threads_per_block << " threads/block, " << r.resources.shared_bytes
      << " B shared/block, " << r.resources.registers << " registers/thread, " << r.resources.blocks_per_sm
      << " blocks/SM, occupancy " << fmt("%.0f%%", 100 * r.resources.occupancy) << "\n"
      << "  textbook   " << fmt("%.2f", r.model.opb) << " OP/B = " << r.model.formula << "\n";
    return s.str();
}

std::string report_columns() {
    return "      N  check  max rel err  median ms    min ms    max ms   Gpts/s  GFLOP/s     GB/s  copy GB/s  % copy\n";
}

std::string report_row(const RunRecord& r) {
    char buf[256];
    const char* verdict = r.check.ok() ? "PASS" : "FAIL";
    if (!r.timed) {
        std::snprintf(buf, sizeof buf, "%7u  %-5s  %11.1e\n", r.n, verdict, r.check.max_rel_err);
        return buf;
    }
    Rates x = rates(r);
    const std::string error = r.checked ? fmt("%11.1e", r.check.max_rel_err) : "          -";
    std::snprintf(buf, sizeof buf, "%7u  %-5s  %s  %9.4f  %8.4f  %8.4f  %7.2f  %7.1f  %7.1f  %9.1f  %5.1f%%\n", r.n,
                  r.checked ? verdict : "-", error.c_str(), r.kernel.median_ms, r.kernel.min_ms, r.kernel.max_ms,
                  x.points_per_s * 1e-9, x.gflops, x.gbps, x.copy_gbps, 100 * x.fraction_of_copy);
    return buf;
}

std::string to_json(const RunRecord& r) {
    std::ostringstream s;
    Rates x = rates(r);
    s << "{\"device\": " << json_string(r.device) << ", \"stage\": " << json_string(r.stage)
      << ", \"title\": " << json_string(r.title) << ", \"figure\": " << json_string(r.figure)
      << ", \"implementation\": " << json_string(r.implementation) << ", \"n\": " << r.n;
    if (r.order)
        s << ", \"order\": " << r.order << ", \"points\": " << 6 * r.order + 1 << ", \"kernel\": "
          << json_string(r.kernel_name) << ", \"flops_per_point\": " << r.flops();
    if (!r.checked)  // --time-only: nothing to report, and no "ok" that could pass for a check
        s << ", \"check\": {\"checked\": false}";
    else
        s << ", \"check\": {\"ok\": " << (r.check.ok() ? "true" : "false")
          << ", \"max_rel_err\": " << json_number(r.check.max_rel_err) << ", \"wrong\": " << r.check.wrong
          << ", \"unwritten\": " << r.check.unwritten << ", \"boundary_modified\": " << r.check.boundary_modified
          << ", \"guard_violated\": " << (r.check.guard_violated ? "true" : "false")
          << ", \"input_modified\": " << (r.check.input_modified ? "true" : "false") << "}";
    s << ", \"tile\": {\"in_tile_dim\": " << r.in_tile_dim << ", \"out_tile_dim\": " << r.out_tile_dim
      << ", \"z_coarsening\": " << r.z_coarsening << "}"
      << ", \"model\": {\"opb\": " << json_number(r.model.opb) << ", \"formula\": " << json_string(r.model.formula)
      << "}, \"resources\": " << json_resources(r.resources)
      << ", \"device_peak\": {\"sm_count\": " << r.peak.sm_count << ", \"clock_mhz\": " << json_number(r.peak.clock_mhz)
      << ", \"fp32_lanes_per_sm\": " << r.peak.fp32_lanes
      << ", \"fp32_gflops\": " << (r.peak.fp32_lanes ? json_number(r.peak.fp32_gflops) : std::string("null")) << "}";
    if (r.timed)
        s << ", \"time_ms\": " << json_stats(r.kernel) << ", \"copy_ms\": " << json_stats(r.copy)
          << ", \"points_per_s\": " << json_number(x.points_per_s)
          << ", \"gflops\": " << json_number(x.gflops) << ", \"gbps\": " << json_number(x.gbps)
          << ", \"copy_gbps\": " << json_number(x.copy_gbps)
          << ", \"fraction_of_copy\": " << json_number(x.fraction_of_copy);
    if (r.timed && r.vs_basic > 0) s << ", \"vs_basic\": " << json_number(r.vs_basic);
    s << "}";
    return s.str();
}
