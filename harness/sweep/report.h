#pragma once
// The report of one run: a readable table row and a JSON record for the plots.
#include <string>
#include <vector>

#include "sweep/checker.h"
#include "sweep/model.h"

struct RunRecord {
    std::string device, stage, title, figure, implementation;
    unsigned n = 0;
    CheckResult check;
    bool checked = true;     // false with --time-only: the output was not compared with the reference
    bool timed = false;
    TimeStats kernel, copy;  // the stage, and a device-to-device copy of one grid
    OpbModel model;
    Resources resources;
    DevicePeak peak;
    unsigned in_tile_dim = 0, out_tile_dim = 0, z_coarsening = 0;
    // Stage 10 (order R, sweep/order_main.cu) only; order 0 marks a 7-point stage (02-06), whose
    // report and JSON carry none of these.
    unsigned order = 0;                    // R: 6R + 1 points, a boundary R cells wide
    std::string kernel_name;               // "basic", "tiled" or "fast"
    double vs_basic = 0;                   // the basic kernel's median over this one's, same run (0: none)
    int flops() const { return order ? 12 * int(order) + 1 : kFlopsPerPoint; }
    size_t points() const;                 // interior points: (N-2)³, or (N-2R)³ at order R
};

struct Rates {
    double points_per_s, gflops, gbps, copy_gbps, fraction_of_copy;
};
// Effective bandwidth counts 8 bytes per interior point (read once, written once); the copy
// counts bytes read plus written. FLOPs: 13 per point, 12R + 1 at order R.
Rates rates(const RunRecord& r);

std::string report_header(const RunRecord& r);  // the stage, device, resources and model
std::string report_columns();
std::string report_row(const RunRecord& r);
std::string to_json(const RunRecord& r);
