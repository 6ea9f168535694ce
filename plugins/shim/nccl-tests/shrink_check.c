/*
 * NCCL's own recovery (ncclCommShrink, NCCL 2.27+) with a network plugin carrying the traffic:
 * N ranks on one GPU (different NCCL_HOSTID, so NCCL goes through the network plugin) loop a
 * checked all-reduce; rank VICTIM exits at iteration DIE_AT (or stops with SIGSTOP); the others
 * watch ncclCommGetAsyncError on non-blocking communicators, shrink without it
 * (NCCL_SHRINK_ABORT), and run checked all-reduces on the new communicator.
 *
 *   shrink_check RANK NRANKS IDFILE VICTIM DIE_AT kill|freeze BOUND_S
 * Prints one line per phase with its time (a failure NCCL does not report within BOUND_S seconds
 * counts as a hang, and the rank shrinks anyway, as an application's own timeout would); exit 0
 * when the survivor's results after the shrink are right, 1 otherwise.
 * The unique id goes through IDFILE (rank 0 writes it), so no MPI is needed and a rank's death
 * kills nobody else.
 * SHRINK_REVOKE=1: on a library that has ncclCommRevoke (NCCL 2.29+; looked up at run time, as the
 * installed headers may predate it), the survivors revoke the communicator after the failure,
 * wait for the revoke to end, and then shrink (NCCL_SHRINK_DEFAULT unless SHRINK_FLAGS says 1).
 */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define COUNT (1 << 20)
#define CHECK_CUDA(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "rank %d: %s: %s\n", rank, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

static int rank;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Waits for a non-blocking communicator's pending call: 0 done, the NCCL error, or -1 past the bound. */
static int wait_comm(ncclComm_t comm, cudaStream_t stream, double bound) {
    double start = now();
    for (;;) {
        ncclResult_t async;
        ncclCommGetAsyncError(comm, &async);
        if (async != ncclSuccess && async != ncclInProgress) return (int) async;
        if (async == ncclSuccess && (stream == NULL || cudaStreamQuery(stream) == cudaSuccess)) return 0;
        if (now() - start > bound) return -1;
        usleep(100);
    }
}

/* SHRINK_BLOCKING=1 makes the communicators blocking (NCCL's default); else non-blocking. */
static ncclConfig_t nonblocking(void) {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    const char* b = getenv("SHRINK_BLOCKING");
    c.blocking = b != NULL && strcmp(b, "1") == 0 ? 1 : 0;
    return c;
}

/* One all-reduce of (rank + 1 + it) everywhere, checked against the sum over the ranks. */
static int step(ncclComm_t comm, int me, int n, float* dev, float* host, cudaStream_t s, int it, double bound) {
    for (int i = 0; i < COUNT; i++) host[i] = (float) (me + 1 + it);
    CHECK_CUDA(cudaMemcpy(dev, host, COUNT * sizeof(float), cudaMemcpyHostToDevice));
    ncclResult_t r = ncclAllReduce(dev, dev, COUNT, ncclFloat, ncclSum, comm, s);
    if (r != ncclSuccess && r != ncclInProgress) return (int) r;
    int w = wait_comm(comm, s, bound);
    if (w != 0) return w;
    CHECK_CUDA(cudaMemcpy(host, dev, COUNT * sizeof(float), cudaMemcpyDeviceToHost));
    float expected = n * (n + 1) / 2.0f + (float) n * it;
    for (int i = 0; i < COUNT; i += 997) {
        if (host[i] != expected) {
            fprintf(stderr, "rank %d: iteration %d element %d is %f, not %f\n", me, it, i, host[i], expected);
            exit(1);
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s RANK NRANKS IDFILE VICTIM DIE_AT kill|freeze BOUND_S\n", argv[0]);
        return 1;
    }
    rank = atoi(argv[1]);
    int n = atoi(argv[2]);
    const char* idfile = argv[3];
    int victim = atoi(argv[4]);
    int dieAt = atoi(argv[5]);
    int freeze = strcmp(argv[6], "freeze") == 0;
    double bound = atof(argv[7]);
    CHECK_CUDA(cudaSetDevice(0));
    ncclUniqueId id;
    if (rank == 0) {
        ncclGetUniqueId(&id);
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s.tmp", idfile);
        FILE* f = fopen(tmp, "wb");
        fwrite(&id, sizeof id, 1, f);
        fclose(f);
        rename(tmp, idfile);
    } else {
        FILE* f = NULL;
        for (int i = 0; i < 600 && (f = fopen(idfile, "rb")) == NULL; i++) usleep(100000);
        if (f == NULL || fread(&id, sizeof id, 1, f) != 1) { fprintf(stderr, "rank %d: no id\n", rank); return 1; }
        fclose(f);
    }
    if (rank == 0) {
        int v = 0;
        ncclGetVersion(&v);
        printf("rank 0: NCCL %d.%d.%d\n", v / 10000, v / 100 % 100, v % 100);
    }
    ncclComm_t comm;
    ncclConfig_t config = nonblocking();
    ncclCommInitRankConfig(&comm, n, id, rank, &config);
    if (wait_comm(comm, NULL, 120) != 0) { fprintf(stderr, "rank %d: init failed\n", rank); return 1; }
    float *dev, *host;
    cudaStream_t s;
    CHECK_CUDA(cudaMalloc((void**) &dev, COUNT * sizeof(float)));
    CHECK_CUDA(cudaMallocHost((void**) &host, COUNT * sizeof(float)));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int it = 0;
    double failedAt = 0;
    for (;; it++) {
        if (rank == victim && it == dieAt) {
            printf("rank %d: %s at iteration %d\n", rank, freeze ? "freezing" : "exiting", it);
            fflush(stdout);
            if (freeze) raise(SIGSTOP);
            _exit(3);
        }
        double t = now();
        int r = step(comm, rank, n, dev, host, s, it, bound);
        if (r == -1) {
            /* NCCL reported nothing: the application's own timeout is all it has; shrink anyway. */
            printf("rank %d: HANG: iteration %d not done and no error after %.0f s: shrinking anyway\n", rank, it,
                   bound);
            fflush(stdout);
            failedAt = now();
            break;
        }
        if (r != 0) {
            failedAt = now();
            printf("rank %d: DETECTED at iteration %d: %s (%.2f s into the call)\n", rank, it,
                   ncclGetErrorString((ncclResult_t) r), failedAt - t);
            break;
        }
    }
    int excluded[1] = {victim};
    ncclComm_t small;
    ncclConfig_t c2 = nonblocking();
    double t0 = now();
    /* SHRINK_FLAGS=0 asks for NCCL_SHRINK_DEFAULT, 1 for NCCL_SHRINK_ABORT; the default is ABORT,
     * DEFAULT after a revoke. */
    const char* fl = getenv("SHRINK_FLAGS");
    const char* rv = getenv("SHRINK_REVOKE");
    int revoke = rv != NULL && strcmp(rv, "1") == 0;
    int flags = fl != NULL ? (strcmp(fl, "0") == 0 ? NCCL_SHRINK_DEFAULT : NCCL_SHRINK_ABORT)
                           : (revoke ? NCCL_SHRINK_DEFAULT : NCCL_SHRINK_ABORT);
    if (revoke) {
        typedef ncclResult_t (*revoke_fn)(ncclComm_t, int);
        revoke_fn ncclRevoke = (revoke_fn) dlsym(RTLD_DEFAULT, "ncclCommRevoke");
        if (ncclRevoke == NULL) {
            printf("rank %d: REVOKE UNAVAILABLE: this libnccl has no ncclCommRevoke\n", rank);
        } else {
            ncclResult_t rr = ncclRevoke(comm, 0);
            int w = rr == ncclInProgress || rr == ncclSuccess ? wait_comm(comm, NULL, bound) : (int) rr;
            printf("rank %d: REVOKED in %.2f s: %s\n", rank, now() - t0,
                   w == 0 ? "ok" : w == -1 ? "still in progress" : ncclGetErrorString((ncclResult_t) w));
        }
        fflush(stdout);
    }
    ncclResult_t r = ncclCommShrink(comm, excluded, 1, &small, &c2, flags);
    if (r != ncclSuccess && r != ncclInProgress) {
        printf("rank %d: SHRINK FAILED: %s\n", rank, ncclGetErrorString(r));
        return 1;
    }
    if (wait_comm(small, NULL, bound) != 0) { printf("rank %d: SHRINK FAILED (async)\n", rank); return 1; }
    int me, size;
    ncclCommUserRank(small, &me);
    ncclCommCount(small, &size);
    printf("rank %d: SHRUNK to rank %d of %d in %.2f s (%s, flags %d)\n", rank, me, size, now() - t0,
           c2.blocking ? "blocking" : "non-blocking", flags);
    for (int k = 0; k < 5; k++) {
        if (step(small, me, size, dev, host, s, k, bound) != 0) { printf("rank %d: FAILED after shrink\n", rank); return 1; }
    }
    printf("rank %d: OK: 5 checked all-reduces on the shrunk communicator\n", rank);
    fflush(stdout);
    ncclCommDestroy(small);
    ncclCommAbort(comm);
    return 0;
}
