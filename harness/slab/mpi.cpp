#include "slab/mpi.h"

#include <cstdlib>

#ifdef HEAT_WITH_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>

namespace {
bool started = false;
MPI_Comm local = MPI_COMM_NULL;

void check(int code, const char* call) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw MpiError{std::string(call) + " failed: " + std::string(text, size_t(length))};
}
#define MPI_CHECK(call) check((call), #call)
}  // namespace

bool mpi_built() { return true; }
void mpi_start(int& argc, char**& argv) {
    MPI_CHECK(MPI_Init(&argc, &argv));
    started = true;
    MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
    MPI_CHECK(MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN));
}
bool mpi_started() { return started; }
void mpi_finish() {
    if (!started) return;
    if (local != MPI_COMM_NULL) MPI_Comm_free(&local);
    MPI_Finalize();
    started = false;
}
int mpi_rank() { int r = 0; MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &r)); return r; }
int mpi_size() { int n = 1; MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &n)); return n; }
int mpi_local_rank() { int r = 0; MPI_CHECK(MPI_Comm_rank(local, &r)); return r; }
int mpi_local_size() { int n = 1; MPI_CHECK(MPI_Comm_size(local, &n)); return n; }
void mpi_barrier() { MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); }
void mpi_broadcast(void* data, size_t bytes, int root) {
    MPI_CHECK(MPI_Bcast(data, int(bytes), MPI_BYTE, root, MPI_COMM_WORLD));
}
double mpi_max(double x) {
    double y = x;
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    return y;
}
double mpi_sum(double x) {
    double y = x;
    MPI_CHECK(MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    return y;
}
// In pieces of at most 1 GiB: MPI counts are ints.
void mpi_send(const void* data, size_t bytes, int to, int tag) {
    const char* p = static_cast<const char*>(data);
    for (size_t done = 0; done < bytes;) {
        int n = int(std::min<size_t>(bytes - done, size_t(1) << 30));
        MPI_CHECK(MPI_Send(p + done, n, MPI_BYTE, to, tag, MPI_COMM_WORLD));
        done += size_t(n);
    }
}
void mpi_receive(void* data, size_t bytes, int from, int tag) {
    char* p = static_cast<char*>(data);
    for (size_t done = 0; done < bytes;) {
        int n = int(std::min<size_t>(bytes - done, size_t(1) << 30));
        MPI_CHECK(MPI_Recv(p + done, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        done += size_t(n);
    }
}
void mpi_abort(int code) {
    if (started) MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}
#else
namespace {
[[noreturn]] void absent() { throw MpiError{"this program was built without MPI"}; }
}  // namespace
bool mpi_built() { return false; }
void mpi_start(int&, char**&) { absent(); }
bool mpi_started() { return false; }
void mpi_finish() {}
int mpi_rank() { return 0; }
int mpi_size() { return 1; }
int mpi_local_rank() { return 0; }
int mpi_local_size() { return 1; }
void mpi_barrier() {}
void mpi_broadcast(void*, size_t, int) {}
double mpi_max(double x) { return x; }
double mpi_sum(double x) { return x; }
void mpi_send(const void*, size_t, int, int) { absent(); }
void mpi_receive(void*, size_t, int, int) { absent(); }
void mpi_abort(int code) { std::_Exit(code); }
#endif

bool mpi_launched() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE",
                          "MPI_LOCALNRANKS"})
        if (std::getenv(v) != nullptr) return true;
    return false;
}
