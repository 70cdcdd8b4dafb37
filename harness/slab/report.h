#pragma once
// Stage 09 (many GPUs): what rank 0 reports for one grid size, on top of stage 07's report
// (heat/report.h): the ranks and their slabs, the comparison with stage 07, the sampled check, the
// overlap and the exchange; as text and as one JSON record. Plain C++.
#include <string>
#include <vector>

#include "common/record.h"
#include "heat/cli.h"
#include "heat/report.h"

// What rank 0 reports for one grid size.
struct ManyGpuRecord {
    HeatRecord heat;
    int ranks = 1;
    std::string launch;            // "mpi" or "threads"
    std::vector<std::string> slabs;  // "rank 0: planes 1..63 on GPU 0"
    bool sampled = false;
    unsigned sampled_planes = 0;
    int equal_to_07 = -1;          // 1 identical, 0 differs, -1 not compared
    std::string compare_note;
    TimeStats loop_serial, exchange;
    double exchange_bytes = 0;     // sent by the busiest rank per step
};

// The lines stage 09 adds to stage 07's report (heat_report) of rec.heat.
std::string many_gpu_lines(const ManyGpuRecord& m, const HeatPlan& plan);
// Stage 07's JSON record of m.heat with stage 09's fields added.
std::string to_json(const ManyGpuRecord& m, const HeatPlan& plan);
