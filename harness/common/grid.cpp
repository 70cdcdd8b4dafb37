#include "common/grid.h"

#include <algorithm>
#include <cmath>

void fill_random(std::vector<float>& grid, uint64_t seed) {
    uint64_t state = seed;
    for (float& v : grid) v = float(0.5 + uniform01(state));
}

Coefficients random_coefficients(uint64_t seed) {
    uint64_t state = seed ^ 0xC0EFF1C1E27ull;
    float w[7];
    for (int n = 0; n < 7;) {
        float candidate = float(0.1 + 0.9 * uniform01(state));
        bool distinct = std::all_of(w, w + n, [&](float x) { return std::fabs(x - candidate) >= 0.05f; });
        if (distinct) w[n++] = candidate;
    }
    return {w[0], w[1], w[2], w[3], w[4], w[5], w[6]};
}
