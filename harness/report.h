#pragma once
// The report of one run: a readable table row and a JSON record for the plots.
#include <string>
#include <vector>

#include "checker.h"
#include "model.h"

struct TimeStats {
    double median_ms = 0, min_ms = 0, max_ms = 0;
    int reps = 0;
};
TimeStats summarize(std::vector<float> times_ms);

struct Resources {
    unsigned threads_per_block = 0;
    size_t shared_bytes = 0;  // static + dynamic shared memory per block
    int registers = 0;        // per thread
    int blocks_per_sm = 0;
    double occupancy = 0;     // resident threads / maximum threads per multiprocessor
};

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

// Pieces of the JSON records and tables, shared with the time-stepping report.
std::string fmt(const char* format, double v);  // snprintf of one number
std::string json_string(const std::string& s);
std::string json_number(double v);               // null for NaN and infinity
std::string json_stats(const TimeStats& t);      // {"median": ..., "min": ..., "max": ..., "reps": ...}
std::string json_resources(const Resources& r);  // {"threads_per_block": ..., "occupancy": ...}
