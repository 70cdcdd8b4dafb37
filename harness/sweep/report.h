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
};

struct Rates {
    double points_per_s, gflops, gbps, copy_gbps, fraction_of_copy;
};
// Effective bandwidth counts 8 bytes per interior point (read once, written once); the copy
// counts bytes read plus written.
Rates rates(const RunRecord& r);

std::string report_header(const RunRecord& r);  // the stage, device, resources and model
std::string report_columns();
std::string report_row(const RunRecord& r);
std::string to_json(const RunRecord& r);
