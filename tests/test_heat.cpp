// The heat equation on the CPU (stages 07 onward): the reference step against closed forms,
// conservation, rounding to the storage precisions, the stability limit, the options, and the
// checker's hints for the mistakes a learner makes, planted into reference results.
#include <cmath>
#include <string>
#include <vector>

#include "check.h"
#include "common/grid.h"
#include "heat/heat.h"
#include "heat/check.h"
#include "heat/cli.h"

namespace {
const Boundary kAll[] = {Boundary::Dirichlet, Boundary::Neumann, Boundary::Periodic};

HostGrid steps_of(HostGrid u, unsigned N, Boundary bc, double r, unsigned steps, Precision p = Precision::Double) {
    HostGrid next;
    for (unsigned s = 0; s < steps; ++s) {
        reference_step(u, next, N, bc, r, nullptr, p);
        u.swap(next);
    }
    return u;
}

std::string parse(std::vector<const char*> args, HeatOptions& h, Options& o) {
    args.insert(args.begin(), "stage_07");
    return parse_heat_args(int(args.size()), args.data(), h, o);
}

bool fails_with(std::vector<const char*> args, const std::string& part) {
    HeatOptions h;
    Options o;
    std::string err = parse(args, h, o);
    if (err.find(part) == std::string::npos) std::fprintf(stderr, "  got '%s', expected '%s'\n", err.c_str(), part.c_str());
    return err.find(part) != std::string::npos;
}

// The hint the checker gives for `got` after `steps` steps from `initial`.
std::string hint_for(const HostGrid& got, const HostGrid& initial, unsigned N, Boundary bc, unsigned steps) {
    ReferenceRun ref = run_reference(initial, N, bc, 0.125, nullptr, Precision::Float, steps, true);
    HeatCheck c = check_heat(got, ref, N, bc, Precision::Float);
    CHECK(!c.ok());
    return c.hint;
}
bool has(const std::string& text, const std::string& part) {
    if (text.find(part) == std::string::npos) std::fprintf(stderr, "  hint '%s' lacks '%s'\n", text.c_str(), part.c_str());
    return text.find(part) != std::string::npos;
}
}  // namespace

int main() {
    const unsigned N = 9;

    // A constant field is a steady state under every boundary condition.
    for (Boundary bc : kAll) {
        HostGrid u(grid_cells(N), 0.75);
        HostGrid after = steps_of(u, N, bc, 1.0 / 6, 5);
        for (double v : after) CHECK(v == 0.75);
    }

    // Under Dirichlet boundaries a linear field is steady: its discrete Laplacian is zero.
    HostGrid linear(grid_cells(N));
    for (unsigned i = 0; i < N; ++i)
        for (unsigned j = 0; j < N; ++j)
            for (unsigned k = 0; k < N; ++k) linear[grid_index(N, i, j, k)] = 1 + 0.5 * i - 0.25 * j + 0.125 * k;
    HostGrid after = steps_of(linear, N, Boundary::Dirichlet, 0.125, 7);
    for (size_t c = 0; c < linear.size(); ++c) CHECK(std::fabs(after[c] - linear[c]) < 1e-12);

    // One hot cell spreads r to each neighbour and keeps 1 - 6r (Dirichlet, away from the faces).
    HostGrid spike(grid_cells(N), 0.0);
    spike[grid_index(N, 4, 4, 4)] = 1;
    HostGrid spread = steps_of(spike, N, Boundary::Dirichlet, 0.125, 1);
    CHECK(spread[grid_index(N, 4, 4, 4)] == 1 - 6 * 0.125);
    CHECK(spread[grid_index(N, 3, 4, 4)] == 0.125 && spread[grid_index(N, 4, 4, 5)] == 0.125);
    CHECK(spread[grid_index(N, 3, 3, 4)] == 0);

    // Neumann and periodic boundaries conserve the total heat; the ghosts follow their rules.
    for (Boundary bc : {Boundary::Neumann, Boundary::Periodic}) {
        HostGrid u = random_state(N, bc, Precision::Double, 5);
        double before = total_heat(u, N);
        HostGrid v = steps_of(u, N, bc, 0.15, 40);
        CHECK(std::fabs(total_heat(v, N) - before) <= 1e-12 * before);
        unsigned low = bc == Boundary::Neumann ? 1 : N - 2, high = bc == Boundary::Neumann ? N - 2 : 1;
        CHECK(v[grid_index(N, 0, 3, 5)] == v[grid_index(N, low, 3, 5)]);
        CHECK(v[grid_index(N, 3, N - 1, 5)] == v[grid_index(N, 3, high, 5)]);
        CHECK(v[grid_index(N, 3, 5, 0)] == v[grid_index(N, 3, 5, low)]);
    }
    // Dirichlet lets heat out: a warm inside with cold faces cools.
    {
        HostGrid u(grid_cells(N), 0.0);
        for (unsigned i = 1; i + 1 < N; ++i)
            for (unsigned j = 1; j + 1 < N; ++j)
                for (unsigned k = 1; k + 1 < N; ++k) u[grid_index(N, i, j, k)] = 1;
        CHECK(total_heat(steps_of(u, N, Boundary::Dirichlet, 0.125, 3), N) < total_heat(u, N));
    }

    // The analytic solutions satisfy their boundary conditions and decay at their rates.
    {
        HeatGeometry g{33, Boundary::Dirichlet};
        CHECK(std::fabs(exact_solution(g, 1, 0.01, 0, 7, 9)) < 1e-12);
        HeatGeometry n{34, Boundary::Neumann};
        CHECK(std::fabs(exact_solution(n, 1, 0.01, 0, 7, 9) - exact_solution(n, 1, 0.01, 1, 7, 9)) < 1e-12);
        HeatGeometry p{34, Boundary::Periodic};
        CHECK(std::fabs(exact_solution(p, 1, 0.01, 0, 7, 9) - exact_solution(p, 1, 0.01, 32, 7, 9)) < 1e-12);
        // The explicit scheme follows the analytic solution at second order: errors at N and 2N.
        double e[2];
        for (int level = 0; level < 2; ++level) {
            HeatGeometry d{level ? 33u : 17u, Boundary::Dirichlet};
            const double h = d.h(), dt = h * h / 8, t_end = 0.01;
            unsigned steps = unsigned(std::ceil(t_end / dt));
            HostGrid u = exact_state(d, 1, 0, Precision::Double);
            u = steps_of(u, d.N, Boundary::Dirichlet, t_end / steps / (h * h), steps);
            e[level] = error_against_exact(u, d, 1, t_end);
        }
        CHECK(e[1] < e[0] / 3.5 && e[1] > e[0] / 4.5);
    }

    // Rounding to the storage precisions: ties to even, subnormals, overflow.
    CHECK(round_to(Precision::Half, 1.0 + std::ldexp(1.0, -11)) == 1.0);  // a tie, to even
    CHECK(round_to(Precision::Half, 1.0 + 3 * std::ldexp(1.0, -11)) == 1.0 + std::ldexp(1.0, -9));
    CHECK(round_to(Precision::Half, 0.1) == 0.0999755859375);
    CHECK(round_to(Precision::Half, std::ldexp(1.0, -24) * 0.75) == std::ldexp(1.0, -24));  // subnormal
    CHECK(round_to(Precision::Half, 65520.0) == INFINITY && round_to(Precision::Half, 65519.0) == 65504.0);
    CHECK(round_to(Precision::BFloat16, 1.0 + std::ldexp(1.0, -8)) == 1.0);
    CHECK(round_to(Precision::BFloat16, 0.1) == 0.10009765625);
    CHECK(round_to(Precision::Float, 0.1) == double(0.1f) && round_to(Precision::Double, 0.1) == 0.1);
    CHECK(unit_roundoff(Precision::Half) == std::ldexp(1.0, -11));

    // The stability limit: dt <= h²/(6α), refused above it with both numbers in the message.
    {
        HeatGeometry g{65, Boundary::Dirichlet};
        double limit = stable_dt_limit(g, 2.0);
        CHECK(std::fabs(limit - 1.0 / 64 / 64 / 12) < 1e-15);
        CHECK(stability_message(g, 2.0, limit).empty());
        std::string m = stability_message(g, 2.0, 2 * limit);
        CHECK(has(m, "stability limit") && has(m, "--allow-unstable") && has(m, "r = α·dt/h² = 0.3333"));
    }

    // The options: defaults, plans, and every bad combination named.
    {
        HeatOptions h;
        Options o;
        CHECK(parse({"--bc", "periodic", "--precision=half", "--steps", "0", "--n", "33"}, h, o).empty());
        CHECK(h.bc == Boundary::Periodic && h.precision == Precision::Half && h.steps == 0 && o.sizes[0] == 33);
        HeatPlan plan;
        HeatOptions t;
        Options ot;
        CHECK(parse({"--t-end", "0.01"}, t, ot).empty());
        CHECK(plan_heat_run(t, 17, plan).empty());
        CHECK(plan.steps == 21 && std::fabs(plan.t_end - 0.01) < 1e-15 && plan.r <= 0.125);  // h = 1/16: 0.01 · 2048 = 20.5
        HeatOptions u;
        CHECK(parse({"--dt", "0.01"}, u, ot).empty());
        CHECK(has(plan_heat_run(u, 17, plan), "stability limit"));
        HeatOptions j;
        CHECK(parse({"--jacobi"}, j, ot).empty() && j.precision == Precision::Double);
    }
    CHECK(fails_with({"--bc", "robin"}, "dirichlet, neumann or periodic"));
    CHECK(fails_with({"--precision", "fp8"}, "float, double, half or bf16"));
    CHECK(fails_with({"--steps", "-1"}, "whole number"));
    CHECK(fails_with({"--dt", "0"}, "positive number"));
    CHECK(fails_with({"--alpha", "abc"}, "positive number"));
    CHECK(fails_with({"--steps", "5", "--t-end", "1"}, "exclude each other"));
    CHECK(fails_with({"--tol", "1e-3"}, "add --jacobi"));
    CHECK(fails_with({"--jacobi", "--bc", "neumann"}, "Dirichlet"));
    CHECK(fails_with({"--jacobi", "--precision", "half"}, "float or double"));
    CHECK(fails_with({"--jacobi", "--steps", "3"}, "belongs to the time loop"));
    CHECK(fails_with({"--jacobi", "--tol", "2"}, "below 1"));
    CHECK(fails_with({"--allow-unstable=yes"}, "takes no value"));
    CHECK(fails_with({"--bc"}, "needs a value"));
    CHECK(fails_with({"--n", "2"}, "too small"));

    // The checker: a correct result passes; each planted mistake is named.
    {
        const unsigned M = 12;
        const Boundary bc = Boundary::Periodic;
        HostGrid initial = random_state(M, bc, Precision::Float, 3);
        ReferenceRun ref = run_reference(initial, M, bc, 0.125, nullptr, Precision::Float, 3, true);
        CHECK(check_heat(ref.final, ref, M, bc, Precision::Float).ok());

        // Buffers never swapped: every step read the initial grid, so the output is one step.
        HostGrid one = steps_of(initial, M, bc, 0.125, 1, Precision::Float);
        CHECK(has(hint_for(one, initial, M, bc, 3), "ONE step"));
        // The answer returned from the other buffer: one step short.
        HostGrid two = steps_of(initial, M, bc, 0.125, 2, Precision::Float);
        CHECK(has(hint_for(two, initial, M, bc, 3), "other buffer"));
        // The result pointing at the input: no step seems to have run.
        CHECK(has(hint_for(initial, initial, M, bc, 3), "initial state"));
        // Steps cut short (stage 08's pass of 4 steps without its 3 single steps): the output is the
        // state after 4 of the 7 steps; with tiles (a fused kernel) the hint speaks of passes too.
        HostGrid four = steps_of(initial, M, bc, 0.125, 4, Precision::Float);
        CHECK(has(hint_for(four, initial, M, bc, 7),
                  "the output equals the state after 4 of the 7 steps: the last 3 steps never ran"));
        ReferenceRun seven = run_reference(initial, M, bc, 0.125, nullptr, Precision::Float, 7, true);
        CHECK(has(check_heat(four, seven, M, bc, Precision::Float, 5, 5).hint, "7 mod S single steps"));
        HostGrid six = steps_of(initial, M, bc, 0.125, 6, Precision::Float);
        CHECK(has(hint_for(six, initial, M, bc, 8), "after 6 of the 8 steps: the last 2 steps never ran"));
        CHECK(has(hint_for(two, initial, M, bc, 5), "after 2 of the 5 steps: the last 3 steps never ran"));
        // One pass too many: more steps than asked.
        HostGrid eleven = steps_of(initial, M, bc, 0.125, 11, Precision::Float);
        CHECK(has(hint_for(eleven, initial, M, bc, 7), "after 11 steps, not 7: 4 steps too many ran"));
        // Without the hint states (large grids) the checker does not step again: no such hint.
        ReferenceRun bare = run_reference(initial, M, bc, 0.125, nullptr, Precision::Float, 7, false);
        HeatCheck unhinted = check_heat(four, bare, M, bc, Precision::Float);
        CHECK(!unhinted.ok() && unhinted.hint.find("never ran") == std::string::npos);
        // A state cell never written.
        HostGrid hole = ref.final;
        hole[grid_index(M, 5, 5, 5)] = NAN;
        CHECK(has(hint_for(hole, initial, M, bc, 3), "never written"));
    }
    // Periodic wrap off by one: ghost 0 copies ghost N-1 (stale) instead of cell N-2, along k.
    {
        const unsigned M = 12;
        HostGrid u = random_state(M, Boundary::Periodic, Precision::Float, 4), next;
        HostGrid initial = u;
        reference_step(u, next, M, Boundary::Periodic, 0.125, nullptr, Precision::Float);
        for (unsigned i = 1; i + 1 < M; ++i)
            for (unsigned j = 1; j + 1 < M; ++j) next[grid_index(M, i, j, 0)] = u[grid_index(M, i, j, M - 1)];
        std::string hint = hint_for(next, initial, M, Boundary::Periodic, 1);
        CHECK(has(hint, "k = 0") && has(hint, "far side"));
    }
    // A Neumann face left un-mirrored (the i = N-1 ghosts keep their old values): after two
    // steps the cells next to it are wrong too, and the hint names the face.
    {
        const unsigned M = 12;
        HostGrid u = random_state(M, Boundary::Neumann, Precision::Float, 6), next;
        HostGrid initial = u;
        for (int s = 0; s < 2; ++s) {
            reference_step(u, next, M, Boundary::Neumann, 0.125, nullptr, Precision::Float);
            for (unsigned j = 1; j + 1 < M; ++j)
                for (unsigned k = 1; k + 1 < M; ++k) next[grid_index(M, M - 1, j, k)] = initial[grid_index(M, M - 1, j, k)];
            u.swap(next);
        }
        std::string hint = hint_for(u, initial, M, Boundary::Neumann, 2);
        CHECK(has(hint, "i = N-1") && has(hint, "mirror"));
    }
    // Dirichlet ghosts overwritten.
    {
        const unsigned M = 10;
        HostGrid initial = random_state(M, Boundary::Dirichlet, Precision::Float, 7);
        HostGrid got = steps_of(initial, M, Boundary::Dirichlet, 0.125, 1, Precision::Float);
        got[grid_index(M, 4, 4, 0)] += 0.5;
        CHECK(has(hint_for(got, initial, M, Boundary::Dirichlet, 1), "fixed values"));
    }
    // Stage 08: a pass of S fused steps writes tiles; errors on a tile's edge (a halo narrower
    // than S) are named as such, and only when the run has tiles.
    {
        const unsigned M = 40, tile = 10;
        HostGrid initial = random_state(M, Boundary::Dirichlet, Precision::Float, 9);
        ReferenceRun ref = run_reference(initial, M, Boundary::Dirichlet, 0.125, nullptr, Precision::Float, 1, true);
        HostGrid got = ref.final;
        for (unsigned i = 5; i < 35; ++i)
            for (unsigned k : {11u, 20u}) got[grid_index(M, i, 15, k)] += 0.25;  // first and last column of a tile
        HeatCheck tiled = check_heat(got, ref, M, Boundary::Dirichlet, Precision::Float, tile, tile);
        CHECK(!tiled.ok() && has(tiled.hint, "edge of a block's tile") && has(tiled.hint, "halo is narrower"));
        HeatCheck plain = check_heat(got, ref, M, Boundary::Dirichlet, Precision::Float);
        CHECK(!plain.ok() && plain.hint.find("tile") == std::string::npos);
        // Stage 08's tiles along k start at column 0: then columns 10 and 19 are a tile's edges,
        // and 19 is not one when they start at the first state cell.
        HostGrid from0 = ref.final;
        for (unsigned i = 5; i < 35; ++i)
            for (unsigned k : {10u, 19u}) from0[grid_index(M, i, 15, k)] += 0.25;
        CHECK(has(check_heat(from0, ref, M, Boundary::Dirichlet, Precision::Float, tile, tile, 0, 0).hint,
                  "halo is narrower"));
        CHECK(check_heat(from0, ref, M, Boundary::Dirichlet, Precision::Float, tile, tile).hint.find("tile") ==
              std::string::npos);
        // Errors in the middle of the tiles are not blamed on their edges.
        HostGrid middle = ref.final;
        for (unsigned i = 5; i < 35; ++i) middle[grid_index(M, i, 15, 15)] += 0.25;
        HeatCheck inner = check_heat(middle, ref, M, Boundary::Dirichlet, Precision::Float, tile, tile);
        CHECK(!inner.ok() && inner.hint.find("tile") == std::string::npos);
        // The edges of the chunks of planes count as well, when the blocks split the planes.
        HostGrid planes = ref.final;
        for (unsigned i : {11u, 20u}) planes[grid_index(M, i, 15, 15)] += 0.25;  // first and last plane of a chunk
        CHECK(has(check_heat(planes, ref, M, Boundary::Dirichlet, Precision::Float, tile, tile, tile).hint,
                  "halo is narrower"));
        CHECK(check_heat(planes, ref, M, Boundary::Dirichlet, Precision::Float, tile, tile).hint.find("tile") ==
              std::string::npos);
        // Neumann: the ghosts mirror the wrong cells on a tile's edge next to a face, so they are
        // wrong too, but they follow their rule: the hint still names the halo, not the ghosts.
        ReferenceRun mirrored = run_reference(random_state(M, Boundary::Neumann, Precision::Float, 9), M,
                                              Boundary::Neumann, 0.125, nullptr, Precision::Float, 1, true);
        HostGrid edge = mirrored.final;
        for (unsigned i = 5; i < 35; ++i)
            for (unsigned k : {1u, 20u}) edge[grid_index(M, i, 15, k)] += 0.25;
        fill_ghosts(edge, M, Boundary::Neumann);
        HeatCheck halo = check_heat(edge, mirrored, M, Boundary::Neumann, Precision::Float, tile, tile);
        CHECK(halo.ghosts_wrong > 0 && has(halo.hint, "halo is narrower"));
    }
    // Stage 08's host loop: passes of S steps, then single steps, and which grid ends with the result.
    for (unsigned S = 1; S <= 8; ++S)
        for (unsigned steps = 0; steps <= 40; ++steps) {
            FusedSchedule f = fused_schedule(steps, S);
            CHECK(f.passes * S + f.single_steps == steps);
            CHECK(S == 1 ? f.passes == 0 : f.single_steps < S);
            CHECK(f.result_in_second() == ((f.passes + f.single_steps) % 2 == 1));
        }
    CHECK(fused_schedule(7, 4).passes == 1 && fused_schedule(7, 4).single_steps == 3);
    CHECK(!fused_schedule(7, 4).result_in_second());  // 4 launches: back in the first grid
    CHECK(fused_schedule(3, 8).passes == 0 && fused_schedule(3, 8).result_in_second());
    CHECK(fused_schedule(64, 8).passes == 8 && fused_schedule(64, 8).single_steps == 0);
    // The DRAM model: a 32 × 32 tile with a halo of 4 writes 24 × 24 columns; float.
    CHECK(std::fabs(fused_bytes_per_update({32, 32, 24, 24}, 4, 4) - 4.0 * (1024 + 576) / (576 * 4)) < 1e-12);
    CHECK(std::fabs(fused_bytes_per_update({32, 32, 30, 30}, 1, 4) - 4.0 * (1024 + 900) / 900) < 1e-12);
    // Tiles far wider than the halo approach 2·4/S bytes: one read and one write per S updates.
    CHECK(std::fabs(fused_bytes_per_update({100000, 100000, 99984, 99984}, 8, 4) - 1.0) < 1e-3);
    // Chunks of 10 planes read 2S = 8 planes more: 18 planes read for 10 written.
    CHECK(std::fabs(fused_bytes_per_update({32, 128, 24, 120, 10}, 4, 4) -
                    4.0 * (32 * 128 * 1.8 + 24 * 120) / (24 * 120 * 4)) < 1e-12);
    return test_exit_code();
}
