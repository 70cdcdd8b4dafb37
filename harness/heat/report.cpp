#include "heat/report.h"

#include <cmath>
#include <sstream>

#include "common/grid.h"

HeatRates heat_rates(const HeatRecord& r) {
    HeatRates x{};
    if (!r.timed || r.step.median_ms <= 0) return x;
    const double state = double(interior_cells(r.n)), cell_bytes = double(bytes_per_cell(r.precision));
    const unsigned steps = r.plan.steps;
    const bool fused = r.fused_steps > 1 && steps > 0 && r.loop.reps > 0;
    const double seconds = (fused ? r.loop.median_ms / steps : r.step.median_ms) * 1e-3;
    x.updates_per_s = state / seconds;
    x.gbps = 2 * cell_bytes * state / seconds * 1e-9;
    x.copy_gbps = 2 * cell_bytes * double(grid_cells(r.n)) / (r.copy.median_ms * 1e-3) * 1e-9;
    x.fraction_of_copy = x.gbps / x.copy_gbps;
    x.loop_us_per_step = steps && r.loop.reps ? r.loop.median_ms * 1e3 / steps : NAN;
    x.graph_us_per_step = steps && r.graph.reps ? r.graph.median_ms * 1e3 / steps : NAN;
    x.loop_over_steps = steps && r.loop.reps ? r.loop.median_ms / (steps * r.step.median_ms) : NAN;
    return x;
}

// The check, the conservation of heat and, for an unstable dt, the growth.
std::string check_lines(const HeatRecord& r) {
    std::ostringstream s;
    const HeatPlan& p = r.plan;
    const HeatCheck& c = r.check;
    if (!r.checked) return "  check      not checked (--time-only): the steps ran on a random state made on the GPU\n";
    s << "  check      " << (c.ok() ? "PASS" : "FAIL") << "  every cell after " << c.steps
      << (c.steps == p.steps ? "" : " of the " + std::to_string(p.steps)) << " step(s) against the float64 CPU "
      << "reference: max error " << fmt("%.2g", c.max_err) << " (tolerance " << fmt("%.2g", c.tolerance) << ")\n";
    if (c.steps != p.steps)
        s << "             (the reference of all " << p.steps << " steps at this N would take the CPU too long; the "
          << "analytic error below covers every step)\n";
    if (!c.ok()) s << describe_heat_failure(c);
    const Conservation& k = r.conservation;
    if (k.applies)
        s << "  heat       " << (k.ok() ? "conserved" : "NOT CONSERVED") << ": the total changed by "
          << fmt("%.2g", k.drift) << " of itself over " << c.steps << " step(s) (rounding allows "
          << fmt("%.2g", k.tolerance) << ")\n"
          << (k.ok() ? "" : "             heat leaks through a face: check that every face's ghosts are written "
                            "after each step\n");
    else
        s << "  heat       not conserved by design: Dirichlet boundaries hold their values, and heat flows through them\n";
    if (!r.growth.empty()) {
        s << "  growth     largest |u| (r > 1/6, unstable):";
        for (const auto& [step, m] : r.growth) s << " " << step << ": " << fmt("%.3g", m) << ";";
        s << "\n";
    }
    return s.str();
}

std::string heat_report(const HeatRecord& r) {
    std::ostringstream s;
    const HeatPlan& p = r.plan;
    s << "stage " << r.stage << " (" << r.implementation << ") - " << r.title << ", beyond the book\n"
      << "  device     " << r.device << "\n"
      << "  kernel     " << r.resources.threads_per_block << " threads/block, " << r.cells_per_thread
      << (r.cells_per_thread > 1 ? " cells per thread along k, " : " cell per thread, ")
      << (r.resources.shared_bytes ? std::to_string(r.resources.shared_bytes) + " B shared/block, " : "")
      << (r.fused_steps > 1 ? std::to_string(r.fused_steps) + " steps per pass, " : "")
      << (r.tile_j ? std::to_string(r.tile_j) + " × " + std::to_string(r.tile_k) + " cells of a plane written per block, " : "")
      << r.resources.registers << " registers/thread, occupancy " << fmt("%.0f%%", 100 * r.resources.occupancy) << "\n"
      << "  problem    N = " << r.n << ", " << boundary_name(r.bc) << " boundaries, " << precision_name(r.precision)
      << " storage; h = " << fmt("%.4g", p.geometry.h()) << ", dt = " << fmt("%.4g", p.dt)
      << " (r = α·dt/h² = " << fmt("%.4g", p.r) << ", stable for r <= 1/6), " << p.steps << " steps to t = "
      << fmt("%.4g", p.t_end) << "\n";
    s << check_lines(r);
    if (r.checked && !std::isnan(r.analytic_error))  // NaN: not measured (stage 09 leaves it to stage 07, which it equals)
        s << "  analytic   error " << fmt("%.3g", r.analytic_error) << " (max |u - exact| / max |exact|) at t = "
          << fmt("%.4g", p.t_end) << " against\n             " << exact_solution_text(r.bc) << "\n";
    if (r.timed) {
        HeatRates x = heat_rates(r);
        s << "  time       one step " << fmt("%.4f", r.step.median_ms) << " ms (median of " << r.step.reps
          << ", from DRAM)";
        if (p.steps > 0)
            s << "; the loop of " << p.steps << " steps " << fmt("%.2f", x.loop_us_per_step) << " µs/step"
              << (r.graph.reps ? ", as a CUDA graph " + fmt("%.2f", x.graph_us_per_step) + " µs/step" : "")
              << "; loop / (steps × one step) = " << fmt("%.3f", x.loop_over_steps);
        s << "\n  speed      " << (r.fused_steps > 1 ? "the loop, " + std::to_string(r.fused_steps) + " steps per pass: " : "")
          << fmt("%.2f", x.updates_per_s * 1e-9) << " G cell-updates/s, "
          << fmt("%.1f", x.gbps) << " GB/s = " << fmt("%.1f%%", 100 * x.fraction_of_copy) << " of a device copy ("
          << fmt("%.1f", x.copy_gbps) << " GB/s)\n";
    }
    s << "\n";
    return s.str();
}

std::string to_json(const HeatRecord& r) {
    std::ostringstream s;
    const HeatPlan& p = r.plan;
    const HeatCheck& c = r.check;
    s << "{\"device\": " << json_string(r.device) << ", \"stage\": " << json_string(r.stage)
      << ", \"title\": " << json_string(r.title) << ", \"implementation\": " << json_string(r.implementation)
      << ", \"n\": " << r.n << ", \"bc\": " << json_string(boundary_name(r.bc))
      << ", \"precision\": " << json_string(precision_name(r.precision))
      << ", \"bytes_per_cell\": " << bytes_per_cell(r.precision) << ", \"cells_per_thread\": " << r.cells_per_thread << ", \"fused_steps\": " << r.fused_steps
      << ", \"tile\": " << (r.tile_j ? "[" + std::to_string(r.tile_j) + ", " + std::to_string(r.tile_k) + "]" : "null")
      << ", \"model_bytes_per_update\": "
      << (r.model_bytes_per_update > 0 ? json_number(r.model_bytes_per_update) : "null")
      << ", \"steps\": " << p.steps << ", \"dt\": " << json_number(p.dt) << ", \"r\": " << json_number(p.r)
      << ", \"h\": " << json_number(p.geometry.h()) << ", \"alpha\": " << json_number(r.alpha)
      << ", \"t_end\": " << json_number(p.t_end) << ", \"check\": {\"ok\": " << (r.ok() ? "true" : "false")
      << ", \"steps_checked\": " << c.steps << ", \"max_err\": " << json_number(c.max_err)
      << ", \"tolerance\": " << json_number(c.tolerance) << ", \"wrong\": " << c.wrong
      << ", \"unwritten\": " << c.unwritten << ", \"ghosts_wrong\": " << c.ghosts_wrong << "}";
    if (!r.checked) s << ", \"checked\": false";
    if (r.conservation.applies)
        s << ", \"conservation\": {\"drift\": " << json_number(r.conservation.drift)
          << ", \"tolerance\": " << json_number(r.conservation.tolerance)
          << ", \"ok\": " << (r.conservation.ok() ? "true" : "false") << "}";
    else
        s << ", \"conservation\": null";
    s << ", \"analytic_error\": " << json_number(r.analytic_error) << ", \"growth\": [";
    for (size_t g = 0; g < r.growth.size(); ++g)
        s << (g ? ", " : "") << "[" << r.growth[g].first << ", " << json_number(r.growth[g].second) << "]";
    s << "], \"resources\": " << json_resources(r.resources) << ", \"snapshots\": [";
    for (size_t n = 0; n < r.snapshots.size(); ++n) {
        const Snapshot& shot = r.snapshots[n];
        s << (n ? ", " : "") << "{\"step\": " << shot.step << ", \"t\": " << json_number(shot.t) << ", \"plane\": [";
        for (size_t row = 0; row < shot.plane.size(); ++row) {
            s << (row ? ", " : "") << "[";
            for (size_t col = 0; col < shot.plane[row].size(); ++col)
                s << (col ? ", " : "") << json_number(shot.plane[row][col]);
            s << "]";
        }
        s << "]}";
    }
    s << "]";
    if (r.timed) {
        HeatRates x = heat_rates(r);
        s << ", \"step_ms\": " << json_stats(r.step) << ", \"copy_ms\": " << json_stats(r.copy);
        if (p.steps > 0) s << ", \"loop_ms\": " << json_stats(r.loop) << ", \"graph_ms\": " << json_stats(r.graph);
        s << ", \"updates_per_s\": " << json_number(x.updates_per_s) << ", \"gbps\": " << json_number(x.gbps)
          << ", \"copy_gbps\": " << json_number(x.copy_gbps) << ", \"fraction_of_copy\": "
          << json_number(x.fraction_of_copy) << ", \"loop_us_per_step\": " << json_number(x.loop_us_per_step)
          << ", \"graph_us_per_step\": " << json_number(x.graph_us_per_step)
          << ", \"loop_over_steps\": " << json_number(x.loop_over_steps);
    }
    s << "}";
    return s.str();
}

std::string jacobi_header(const std::string& device, const std::string& stage, unsigned N, const HeatOptions& h) {
    std::ostringstream s;
    s << "stage " << stage << " - Jacobi iteration for the Poisson problem, on " << device << "\n"
      << "  problem    ∇²u = f on the unit cube, u = 0 on its faces, f = -3π²·sin(πx)sin(πy)sin(πz); exact "
      << "solution sin(πx)sin(πy)sin(πz)\n"
      << "  method     u' = (sum of the six neighbours - h²f)/6: the heat step at r = 1/6 with a source; N = " << N
      << ", " << precision_name(h.precision) << ", stop at relative residual " << fmt("%.2g", h.tol) << "\n";
    return s.str();
}

std::string jacobi_summary(const JacobiRecord& r) {
    std::ostringstream s;
    if (r.converged)
        s << "  converged  after " << r.iterations << " iterations";
    else if (r.stalled)
        s << "  STALLED    after " << r.iterations << " iterations: the residual stopped falling at "
          << fmt("%.2g", r.residual) << ", above --tol. Rounding each stored value perturbs ∇²u by about "
          << "ε·|u|·12/h², which sets a floor; use --precision double or a larger --tol";
    else
        s << "  NOT CONVERGED after --max-iters " << r.iterations << " iterations";
    s << " (checked every " << r.every << "); " << fmt("%.3f", r.time_ms * 1e-3) << " s, "
      << fmt("%.2f", r.iterations ? r.time_ms * 1e3 / double(r.iterations) : 0.0) << " µs per iteration\n"
      << "  residual   " << fmt("%.3g", r.residual) << " (relative, ||f - ∇²u|| / ||f||)\n"
      << "  error      " << fmt("%.3g", r.error) << " against the exact solution (max norm, relative): what is left "
      << "once converged is the O(h²) error of the 7-point Laplacian\n"
      << "  model      Jacobi shrinks the smoothest error by cos(πh) per iteration, so it needs about ln(tol)/ln(cos πh)"
      << " = " << fmt("%.0f", r.predicted_iterations) << " iterations: 4× more each time N doubles. Multigrid and "
      << "conjugate gradients need far fewer.\n\n";
    return s.str();
}

std::string to_json(const JacobiRecord& r) {
    std::ostringstream s;
    s << "{\"device\": " << json_string(r.device) << ", \"stage\": " << json_string(r.stage)
      << ", \"mode\": \"jacobi\", \"implementation\": " << json_string(r.implementation) << ", \"n\": " << r.n
      << ", \"precision\": " << json_string(precision_name(r.precision)) << ", \"tol\": " << json_number(r.tol)
      << ", \"iterations\": " << r.iterations << ", \"predicted_iterations\": " << json_number(r.predicted_iterations)
      << ", \"converged\": " << (r.converged ? "true" : "false") << ", \"stalled\": " << (r.stalled ? "true" : "false")
      << ", \"residual\": " << json_number(r.residual) << ", \"error\": " << json_number(r.error)
      << ", \"time_ms\": " << json_number(r.time_ms) << ", \"history\": [";
    for (size_t n = 0; n < r.history.size(); ++n)
        s << (n ? ", " : "") << "[" << r.history[n].first << ", " << json_number(r.history[n].second) << "]";
    s << "]}";
    return s.str();
}
