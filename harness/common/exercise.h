#pragma once
// What the harness knows about the stage file it was linked with. Meson compiles each stage
// file with STAGE_SOURCE="chapters/NN_name/stencil.cu" (or solutions/...). An exercise is
// "not attempted" while it defines I_AM_NOT_DONE before including its stage header.
#include <cstring>

extern const char kStageSource[];
extern const bool kStageAttempted;
#ifdef STAGE_SOURCE
const char kStageSource[] = STAGE_SOURCE;
#ifdef I_AM_NOT_DONE
const bool kStageAttempted = false;
#else
const bool kStageAttempted = true;
#endif
#endif

inline unsigned ceil_div(unsigned a, unsigned b) { return (a + b - 1) / b; }
inline bool stage_is_solution() { return std::strncmp(kStageSource, "solutions/", 10) == 0; }
