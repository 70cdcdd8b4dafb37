#pragma once

// The seven weights of the 3D 7-point stencil, named as in PMPP Fig. 8.6:
// c0 the centre, c1/c2 the k-1/k+1 neighbours, c3/c4 j-1/j+1, c5/c6 i-1/i+1.
struct Coefficients {
    float c0, c1, c2, c3, c4, c5, c6;
};
