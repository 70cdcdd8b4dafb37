#pragma once
// The little of MPI that stage 09 needs, behind plain C++ (harness/slab/mpi.cpp is compiled with
// the MPI compiler flags, the CUDA files without them). Built without MPI (-DHEAT_WITH_MPI not
// set), mpi_built() is false and the program runs only in its single-process mode (--gpus G).
#include <cstddef>
#include <string>

struct MpiError {
    std::string what;  // the call and MPI's own error text
};

bool mpi_built();
// Whether this process was started by mpirun/mpiexec (Open MPI, MPICH, PMIx, Slurm's srun).
bool mpi_launched();
// MPI_Init, and errors returned rather than fatal. Throws MpiError.
void mpi_start(int& argc, char**& argv);
bool mpi_started();
void mpi_finish();
int mpi_rank();
int mpi_size();
// The rank's index among the ranks of its host (for the GPU it takes), and how many share the host.
int mpi_local_rank();
int mpi_local_size();
void mpi_barrier();
void mpi_broadcast(void* data, size_t bytes, int root);
double mpi_max(double x);
double mpi_sum(double x);
void mpi_send(const void* data, size_t bytes, int to, int tag);
void mpi_receive(void* data, size_t bytes, int from, int tag);
// Ends every rank (a timeout, or an error one rank saw alone).
[[noreturn]] void mpi_abort(int code);
