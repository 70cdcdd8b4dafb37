#pragma once
// The pieces every runner's report is made of: timings, the kernel's resources, the first wrong
// cells a checker lists, and the JSON helpers.
#include <cstddef>
#include <string>
#include <vector>

// A checker lists at most this many wrong cells.
constexpr size_t kMaxReportedCells = 5;

struct WrongCell {
    unsigned i, j, k;
    double expected;
    float got;
};

struct TimeStats {
    double median_ms = 0, min_ms = 0, max_ms = 0;
    int reps = 0;
};
TimeStats summarize(std::vector<float> times_ms);  // median, min and max

struct Resources {
    unsigned threads_per_block = 0;
    size_t shared_bytes = 0;  // static + dynamic shared memory per block
    int registers = 0;        // per thread
    int blocks_per_sm = 0;
    double occupancy = 0;     // resident threads / maximum threads per multiprocessor
};

// Pieces of the JSON records and tables.
std::string fmt(const char* format, double v);  // snprintf of one number
std::string json_string(const std::string& s);
std::string json_number(double v);               // null for NaN and infinity
std::string json_stats(const TimeStats& t);      // {"median": ..., "min": ..., "max": ..., "reps": ...}
std::string json_resources(const Resources& r);  // {"threads_per_block": ..., "occupancy": ...}
