#pragma once
// SM_MAX_THREADS: the most threads one SM of the architecture being compiled holds, for a
// __launch_bounds__ minimum of blocks per SM: ptxas warns about a minimum that does not fit and
// ignores it. The host pass (no __CUDA_ARCH__) takes 2048.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000
#define SM_MAX_THREADS 2048
#elif __CUDA_ARCH__ < 800
#define SM_MAX_THREADS 1024
#else
#define SM_MAX_THREADS 1536  // sm_86, 87, 89, 120: the fewest of the newer SMs
#endif
