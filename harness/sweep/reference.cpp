#include "sweep/reference.h"

#include "common/grid.h"

const Neighbour kNeighbours[7] = {
    {0, 0, 0, "centre (i, j, k)"}, {0, 0, -1, "k-1"}, {0, 0, +1, "k+1"}, {0, -1, 0, "j-1"},
    {0, +1, 0, "j+1"},             {-1, 0, 0, "i-1"}, {+1, 0, 0, "i+1"},
};

void coefficient_array(const Coefficients& c, double w[7]) {
    const float cs[7] = {c.c0, c.c1, c.c2, c.c3, c.c4, c.c5, c.c6};
    for (int n = 0; n < 7; ++n) w[n] = cs[n];
}

double stencil_point(const float* in, unsigned N, const double w[7], unsigned i, unsigned j, unsigned k) {
    double sum = 0.0;
    for (int n = 0; n < 7; ++n) {
        const Neighbour& d = kNeighbours[n];
        sum += w[n] * in[grid_index(N, i + d.di, j + d.dj, k + d.dk)];
    }
    return sum;
}

double reference_point(const float* in, unsigned N, const Coefficients& c, unsigned i, unsigned j, unsigned k) {
    double w[7];
    coefficient_array(c, w);
    return stencil_point(in, N, w, i, j, k);
}
