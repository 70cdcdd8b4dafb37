#pragma once
// The report of one time-stepping run (stages 07 onward): the text a learner reads and a JSON
// record for the plots. Effective bandwidth counts one read and one write of each state cell
// per step, in the storage precision.
#include <string>
#include <utility>
#include <vector>

#include "heat/check.h"
#include "heat/cli.h"
#include "common/record.h"

struct Conservation {
    bool applies = false;  // Neumann and periodic boundaries conserve the total heat
    double drift = 0;      // |total after - total before| / total before
    double tolerance = 0;  // what rounding can explain
    bool ok() const { return !applies || drift <= tolerance; }
};

struct Snapshot {
    unsigned step;
    double t;
    std::vector<std::vector<double>> plane;  // the middle plane, state cells, at most 64×64
};

struct HeatRecord {
    std::string device, stage, title, implementation;
    unsigned n = 0;
    Boundary bc = Boundary::Dirichlet;
    Precision precision = Precision::Float;
    HeatPlan plan;
    double alpha = 1;
    unsigned cells_per_thread = 1;
    unsigned fused_steps = 1;  // steps per trip through memory
    unsigned tile_j = 0, tile_k = 0;  // the rows and columns of a plane one block writes (0: no tiles)
    double model_bytes_per_update = 0;  // fused_bytes_per_update for the kernel's tiles (0: no tiles)
    Resources resources;
    bool checked = true;  // false with --time-only: nothing was compared with the reference
    HeatCheck check;
    Conservation conservation;
    std::vector<std::pair<unsigned, double>> growth;  // (step, largest |u|), for an unstable dt
    double analytic_error = 0;                        // relative max-norm, at the end time
    std::vector<Snapshot> snapshots;
    bool timed = false;
    TimeStats step, loop, graph, copy;  // loop and graph: all the steps; copy: one grid
    bool ok() const { return check.ok() && conservation.ok(); }
};

// The speed per step: of one step, or of the loop when steps are fused (one step alone is then
// not what runs). gbps counts one read and one write of each cell per step.
struct HeatRates {
    double updates_per_s, gbps, copy_gbps, fraction_of_copy;
    double loop_us_per_step, graph_us_per_step, loop_over_steps;  // loop time / (steps × one step)
};
HeatRates heat_rates(const HeatRecord& r);

std::string heat_report(const HeatRecord& r);
std::string to_json(const HeatRecord& r);

struct JacobiRecord {
    std::string device, stage, implementation;
    unsigned n = 0;
    Precision precision = Precision::Double;
    double tol = 0;
    unsigned every = 0;
    unsigned long long iterations = 0;
    double predicted_iterations = 0;  // ln(tol) / ln(cos πh)
    bool converged = false, stalled = false;
    double residual = 0, error = 0, time_ms = 0;
    std::vector<std::pair<unsigned long long, double>> history;  // (iteration, relative residual)
};

std::string jacobi_header(const std::string& device, const std::string& stage, unsigned N, const HeatOptions& h);
std::string jacobi_summary(const JacobiRecord& r);
std::string to_json(const JacobiRecord& r);
