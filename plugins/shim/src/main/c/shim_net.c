/*
 * ncclNetPlugin_v6 ... ncclNetPlugin_v12: one adapter per version difference, each converting its
 * arguments and calling the canonical operation the Java half installed (jccl_net).
 *
 * The symbols are GNU indirect symbols: NCCL's dlsym runs the resolver, which returns the table, or
 * NULL above JCCL_SHIM_MAX_API_VERSION, so NCCL moves on to the next older version exactly as if
 * the newer symbol did not exist.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jccl_shim.h"

/* ---- JCCL_SHIM_PROFILE: what NCCL's proxy spends in the data-path calls ---------------------- */

/* Off by default (one predictable branch per call). On, each data-path call is timed around the
   crossing into Java, and the process prints one line at exit: calls and mean ns of isend, irecv,
   test that found the request pending, and test that completed it, and the polls per completion.
   Under NCCL this tells the transport's per-call cost from NCCL's own loop. */
typedef struct {
    uint64_t calls;
    uint64_t ns;
} call_stat;

static int profiling;
static int profile_checked;
static call_stat stat_isend, stat_irecv, stat_test_pending, stat_test_done;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

static void count(call_stat* s, uint64_t start) {
    __atomic_fetch_add(&s->calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&s->ns, now_ns() - start, __ATOMIC_RELAXED);
}

static double mean(const call_stat* s) {
    return s->calls ? (double) s->ns / (double) s->calls : 0;
}

static void print_profile(void) {
    fprintf(stderr,
            "JCCL_SHIM_PROFILE pid %d: isend %llu calls %.0f ns; irecv %llu calls %.0f ns; test pending %llu calls "
            "%.0f ns; test done %llu calls %.0f ns; %.1f polls per completion\n",
            (int) getpid(), (unsigned long long) stat_isend.calls, mean(&stat_isend),
            (unsigned long long) stat_irecv.calls, mean(&stat_irecv), (unsigned long long) stat_test_pending.calls,
            mean(&stat_test_pending), (unsigned long long) stat_test_done.calls, mean(&stat_test_done),
            stat_test_done.calls ? (double) (stat_test_pending.calls + stat_test_done.calls) / stat_test_done.calls
                                 : 0);
}

static void start_profile_once(void) {
    if (!profile_checked) {
        profile_checked = 1;
        const char* v = getenv("JCCL_SHIM_PROFILE");
        profiling = v != NULL && strcmp(v, "1") == 0;
        if (profiling) {
            atexit(print_profile);
        }
    }
}

#define PROFILED(stat, call)                                   \
    do {                                                       \
        if (!profiling) {                                      \
            return call;                                       \
        }                                                      \
        uint64_t start_ = now_ns();                            \
        ncclResult_t r_ = call;                                \
        count(&(stat), start_);                                \
        return r_;                                             \
    } while (0)

/* ---- shared by every version --------------------------------------------------------------- */

static ncclResult_t init_common(int version, void** ctx, uint64_t commId, int trafficClass, ncclDebugLogger_t log) {
    jccl_set_logger(log);
    start_profile_once();
    char what[32];
    snprintf(what, sizeof what, "ncclNet v%d init", version);
    ncclResult_t r = jccl_java_ready(what, version);
    if (r != ncclSuccess) {
        return r;
    }
    return jccl_net.init(J(ctx), (int64_t) commId, trafficClass, version);
}

static ncclResult_t devices(int* ndev) {
    return jccl_net.devices(J(ndev));
}

/*
 * Whether NCCL may hand the Java transport CUDA device pointers (GPUDirect). Off unless
 * JCCL_SHIM_GDR=1 (and enough CUDA hardware queues, props_of): JcclSocket's device memory path goes
 * through pinned host mirrors, which made NCCL slower than its own host staging (README, "GPUDirect
 * under NCCL"). Without NCCL_PTR_CUDA NCCL keeps its network buffers in pinned host memory, as it
 * does for its own Socket transport.
 */
static int gdr_allowed(void) {
    static int allowed = -1;
    if (allowed < 0) {
        const char* v = getenv("JCCL_SHIM_GDR");
        allowed = v != NULL && strcmp(v, "1") == 0;
    }
    return allowed;
}

/*
 * How many hardware work queues CUDA gives this process's streams (CUDA_DEVICE_MAX_CONNECTIONS,
 * read when the process's CUDA context was made; CUDA's default is 8).
 */
static long cuda_connections(void) {
    const char* v = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    if (v == NULL || *v == '\0') {
        return 8;
    }
    char* end = NULL;
    long n = strtol(v, &end, 10);
    return end != NULL && *end == '\0' ? n : 8;
}

/* The fewest hardware queues with which GPUDirect through the Java transport ran without a stall. */
#define GDR_MIN_CUDA_CONNECTIONS 32

static ncclResult_t props_of(int dev, jccl_props* p) {
    memset(p, 0, sizeof *p);
    ncclResult_t r = jccl_net.getProperties(dev, J(p));
    if (r != ncclSuccess || !(p->ptrSupport & NCCL_PTR_CUDA)) {
        return r;
    }
    if (!gdr_allowed()) {
        p->ptrSupport &= ~NCCL_PTR_CUDA;
        return r;
    }
    long connections = cuda_connections();
    if (connections < GDR_MIN_CUDA_CONNECTIONS) {
        /* A transport that stages device memory copies it on CUDA streams of its own. CUDA maps
           a process's streams onto CUDA_DEVICE_MAX_CONNECTIONS hardware queues, in order, so a
           copy can queue behind one of NCCL's kernels that waits for that very copy: a deadlock
           (measured on an H200, README "GPUDirect under NCCL": 1 queue stalled at the first
           receive, 8 stalled LL and LL128, 32 ran). NCCL then stages through host memory. */
        p->ptrSupport &= ~NCCL_PTR_CUDA;
        static int warned = 0;
        if (!warned) {
            warned = 1;
            const char* set = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
            jccl_log(NCCL_LOG_WARN, NCCL_ALL, "NET/JCCL: JCCL_SHIM_GDR=1 ignored: CUDA_DEVICE_MAX_CONNECTIONS is %s, "
                     "and %s's copies between GPU and host memory can queue behind NCCL's kernels, which wait "
                     "for them (a deadlock); set CUDA_DEVICE_MAX_CONNECTIONS=%d before the process starts",
                     set != NULL && *set != '\0' ? set : "unset (CUDA's default, 8)", jccl_net_name,
                     GDR_MIN_CUDA_CONNECTIONS);
        }
    }
    return r;
}

static ncclResult_t listen_any(int dev, void* handle, void** listenComm) {
    return jccl_net.listen(0, dev, J(handle), J(listenComm));
}

static ncclResult_t connect_any(int dev, void* handle, void** sendComm) {
    return jccl_net.connect(0, dev, J(handle), J(sendComm));
}

static ncclResult_t accept_any(void* listenComm, void** recvComm) {
    return jccl_net.accept(J(listenComm), J(recvComm));
}

static ncclResult_t regMr_int(void* comm, void* data, int size, int type, void** mhandle) {
    return jccl_net.regMr(J(comm), J(data), size, type, J(mhandle));
}

static ncclResult_t regMr_size(void* comm, void* data, size_t size, int type, void** mhandle) {
    return jccl_net.regMr(J(comm), J(data), (int64_t) size, type, J(mhandle));
}

static ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle) {
    return jccl_net.regMrDmaBuf(J(comm), J(data), (int64_t) size, type, (int64_t) offset, fd, J(mhandle));
}

static ncclResult_t deregMr(void* comm, void* mhandle) {
    return jccl_net.deregMr(J(comm), J(mhandle));
}

static ncclResult_t isend_int(void* sendComm, void* data, int size, int tag, void* mhandle, void** request) {
    PROFILED(stat_isend, jccl_net.isend(J(sendComm), J(data), size, tag, J(mhandle), J(request)));
}

static ncclResult_t isend_size(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request) {
    PROFILED(stat_isend, jccl_net.isend(J(sendComm), J(data), (int64_t) size, tag, J(mhandle), J(request)));
}

static ncclResult_t isend_phandle(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                                  void** request) {
    (void) phandle;
    PROFILED(stat_isend, jccl_net.isend(J(sendComm), J(data), (int64_t) size, tag, J(mhandle), J(request)));
}

/* v6-v8 post int sizes; the canonical form takes size_t. */
static ncclResult_t irecv_int(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                              void** request) {
    if (n < 0 || n > JCCL_MAX_GROUPED_RECV) {
        jccl_log(NCCL_LOG_WARN, NCCL_ALL, "NET/JCCL: irecv of %d buffers; at most %d are supported", n,
                 JCCL_MAX_GROUPED_RECV);
        return ncclInternalError;
    }
    size_t wide[JCCL_MAX_GROUPED_RECV];
    for (int i = 0; i < n; i++) {
        wide[i] = sizes[i] < 0 ? 0 : (size_t) sizes[i];
    }
    PROFILED(stat_irecv, jccl_net.irecv(J(recvComm), n, J(data), J(wide), J(tags), J(mhandles), J(request)));
}

static ncclResult_t irecv_size(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                               void** request) {
    PROFILED(stat_irecv, jccl_net.irecv(J(recvComm), n, J(data), J(sizes), J(tags), J(mhandles), J(request)));
}

static ncclResult_t irecv_phandles(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                                   void** phandles, void** request) {
    (void) phandles;
    PROFILED(stat_irecv, jccl_net.irecv(J(recvComm), n, J(data), J(sizes), J(tags), J(mhandles), J(request)));
}

static ncclResult_t iflush(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request) {
    return jccl_net.iflush(J(recvComm), n, J(data), J(sizes), J(mhandles), J(request));
}

/* Top 12 bits of a send request that completed inside isend (HandleTable.doneSend in Java: tag
   0x4A, kind DONE_SEND = 9, the size in the low 32 bits). test() answers it without an upcall. */
#define JCCL_DONE_SEND_PREFIX ((0x4AULL << 4) | 9)

static ncclResult_t test(void* request, int* done, int* sizes) {
    uint64_t h = (uint64_t) (uintptr_t) request;
    if ((h >> 52) == JCCL_DONE_SEND_PREFIX) {
        *done = 1;
        if (sizes != NULL) {
            *sizes = (int) (uint32_t) h;
        }
        return ncclSuccess;
    }
    if (!profiling) {
        return jccl_net.test(J(request), J(done), J(sizes));
    }
    uint64_t start = now_ns();
    ncclResult_t r = jccl_net.test(J(request), J(done), J(sizes));
    count(r == ncclSuccess && *done ? &stat_test_done : &stat_test_pending, start);
    return r;
}

static ncclResult_t closeSend(void* sendComm) {
    return jccl_net.closeSend(J(sendComm));
}

static ncclResult_t closeRecv(void* recvComm) {
    return jccl_net.closeRecv(J(recvComm));
}

static ncclResult_t closeListen(void* listenComm) {
    return jccl_net.closeListen(J(listenComm));
}

/* ---- properties, version by version -------------------------------------------------------- */

#define COPY_V6_FIELDS(dst, p)                      \
    do {                                            \
        (dst)->name = (char*) (p).name;             \
        (dst)->pciPath = (char*) (p).pciPath;       \
        (dst)->guid = (p).guid;                     \
        (dst)->ptrSupport = (p).ptrSupport;         \
        (dst)->speed = (p).speed;                   \
        (dst)->port = (p).port;                     \
        (dst)->latency = (p).latency;               \
        (dst)->maxComms = (p).maxComms;             \
        (dst)->maxRecvs = (p).maxRecvs;             \
    } while (0)

/* Fields of v9 and later beyond v8's. */
#define COPY_V9_FIELDS(dst, p, dev)                                                                  \
    do {                                                                                             \
        (dst)->regIsGlobal = (p).regIsGlobal;                                                        \
        (dst)->forceFlush = (p).forceFlush;                                                          \
        (dst)->netDeviceType = NCCL_NET_DEVICE_HOST;                                                 \
        (dst)->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;                                   \
        memset(&(dst)->vProps, 0, sizeof((dst)->vProps));                                            \
        (dst)->vProps.ndevs = 1;                                                                     \
        (dst)->vProps.devs[0] = (dev);                                                               \
        (dst)->maxP2pBytes = (p).maxP2pBytes;                                                        \
        (dst)->maxCollBytes = (p).maxCollBytes;                                                      \
    } while (0)

static ncclResult_t getProperties_v6(int dev, ncclNetProperties_v6_t* props) {
    jccl_props p;
    ncclResult_t r = props_of(dev, &p);
    if (r == ncclSuccess) {
        COPY_V6_FIELDS(props, p);
    }
    return r;
}

static ncclResult_t getProperties_v7(int dev, ncclNetProperties_v7_t* props) {
    jccl_props p;
    ncclResult_t r = props_of(dev, &p);
    if (r == ncclSuccess) {
        COPY_V6_FIELDS(props, p);
        props->netDeviceType = NCCL_NET_DEVICE_HOST;
        props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    }
    return r;
}

static ncclResult_t getProperties_v8(int dev, ncclNetProperties_v8_t* props) {
    jccl_props p;
    ncclResult_t r = props_of(dev, &p);
    if (r == ncclSuccess) {
        COPY_V6_FIELDS(props, p);
        props->regIsGlobal = p.regIsGlobal;
        props->netDeviceType = NCCL_NET_DEVICE_HOST;
        props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    }
    return r;
}

static ncclResult_t getProperties_v9(int dev, ncclNetProperties_v9_t* props) {
    jccl_props p;
    ncclResult_t r = props_of(dev, &p);
    if (r == ncclSuccess) {
        COPY_V6_FIELDS(props, p);
        COPY_V9_FIELDS(props, p, dev);
    }
    return r;
}

static ncclResult_t getProperties_v11(int dev, ncclNetProperties_v11_t* props) {
    jccl_props p;
    ncclResult_t r = props_of(dev, &p);
    if (r == ncclSuccess) {
        COPY_V6_FIELDS(props, p);
        COPY_V9_FIELDS(props, p, dev);
        props->maxMultiRequestSize = 1;
    }
    return r;
}

static ncclResult_t getProperties_v12(int dev, ncclNetProperties_v12_t* props) {
    jccl_props p;
    ncclResult_t r = props_of(dev, &p);
    if (r == ncclSuccess) {
        COPY_V6_FIELDS(props, p);
        COPY_V9_FIELDS(props, p, dev);
        props->maxMultiRequestSize = 1;
        props->railId = -1;
        props->planeId = -1;
    }
    return r;
}

/* ---- init and connection setup, version by version ----------------------------------------- */

static ncclResult_t init_v6(ncclDebugLogger_t log) {
    return init_common(6, NULL, 0, -1, log);
}
static ncclResult_t init_v7(ncclDebugLogger_t log) {
    return init_common(7, NULL, 0, -1, log);
}
static ncclResult_t init_v8(ncclDebugLogger_t log) {
    return init_common(8, NULL, 0, -1, log);
}
static ncclResult_t init_v9(ncclDebugLogger_t log) {
    return init_common(9, NULL, 0, -1, log);
}
static ncclResult_t init_v10(ncclDebugLogger_t log, ncclProfilerCallback_t prof) {
    (void) prof;
    return init_common(10, NULL, 0, -1, log);
}
static ncclResult_t init_v11(void** ctx, uint64_t commId, ncclNetCommConfig_v10_t* config, ncclDebugLogger_t log,
                             ncclProfilerCallback_t prof) {
    (void) prof;
    return init_common(11, ctx, commId, config ? config->trafficClass : -1, log);
}
static ncclResult_t init_v12(void** ctx, uint64_t commId, ncclNetCommConfig_v10_t* config, ncclDebugLogger_t log,
                             ncclProfilerCallback_t prof) {
    (void) prof;
    return init_common(12, ctx, commId, config ? config->trafficClass : -1, log);
}

/* Host-memory transports ignore the device-offload handles of v7 and later. */
static ncclResult_t connect_v7(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** sendDevComm) {
    (void) sendDevComm;
    return connect_any(dev, handle, sendComm);
}
static ncclResult_t accept_v7(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm) {
    (void) recvDevComm;
    return accept_any(listenComm, recvComm);
}
static ncclResult_t connect_v10(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                                ncclNetDeviceHandle_v7_t** sendDevComm) {
    (void) config;
    (void) sendDevComm;
    return connect_any(dev, handle, sendComm);
}
static ncclResult_t listen_v11(void* ctx, int dev, void* handle, void** listenComm) {
    return jccl_net.listen(J(ctx), dev, J(handle), J(listenComm));
}
static ncclResult_t connect_v11(void* ctx, int dev, void* handle, void** sendComm,
                                ncclNetDeviceHandle_v7_t** sendDevComm) {
    (void) sendDevComm;
    return jccl_net.connect(J(ctx), dev, J(handle), J(sendComm));
}
static ncclResult_t finalize_v11(void* ctx) {
    return jccl_net.finalize(J(ctx));
}

/* ---- the tables ---------------------------------------------------------------------------- */

static const ncclNet_v6_t net_v6 = {
    jccl_net_name, init_v6, devices, getProperties_v6, listen_any, connect_any, accept_any, regMr_int, regMrDmaBuf,
    deregMr, isend_int, irecv_int, iflush, test, closeSend, closeRecv, closeListen,
};

static const ncclNet_v7_t net_v7 = {
    jccl_net_name, init_v7, devices, getProperties_v7, listen_any, connect_v7, accept_v7, regMr_int, regMrDmaBuf,
    deregMr, isend_int, irecv_int, iflush, test, closeSend, closeRecv, closeListen, NULL, NULL,
};

static const ncclNet_v8_t net_v8 = {
    jccl_net_name, init_v8, devices, getProperties_v8, listen_any, connect_v7, accept_v7, regMr_size, regMrDmaBuf,
    deregMr, isend_int, irecv_int, iflush, test, closeSend, closeRecv, closeListen, NULL, NULL,
};

static const ncclNet_v9_t net_v9 = {
    jccl_net_name, init_v9, devices, getProperties_v9, listen_any, connect_v7, accept_v7, regMr_size, regMrDmaBuf,
    deregMr, isend_size, irecv_size, iflush, test, closeSend, closeRecv, closeListen, NULL, NULL, NULL,
};

static const ncclNet_v10_t net_v10 = {
    jccl_net_name, init_v10, devices, getProperties_v9, listen_any, connect_v10, accept_v7, regMr_size, regMrDmaBuf,
    deregMr, isend_phandle, irecv_phandles, iflush, test, closeSend, closeRecv, closeListen, NULL, NULL, NULL,
};

static const ncclNet_v11_t net_v11 = {
    jccl_net_name, init_v11, devices, getProperties_v11, listen_v11, connect_v11, accept_v7, regMr_size, regMrDmaBuf,
    deregMr, isend_phandle, irecv_phandles, iflush, test, closeSend, closeRecv, closeListen, NULL, NULL, NULL,
    finalize_v11, NULL,
};

static const ncclNet_v12_t net_v12 = {
    jccl_net_name, init_v12, devices, getProperties_v12, listen_v11, connect_v11, accept_v7, regMr_size, regMrDmaBuf,
    deregMr, isend_phandle, irecv_phandles, iflush, test, closeSend, closeRecv, closeListen, NULL, NULL, NULL,
    finalize_v11, NULL,
};

/* ---- the exported symbols ------------------------------------------------------------------ */

JCCL_EXPORT(ncclNetPlugin_v6, net_v6, 6)
JCCL_EXPORT(ncclNetPlugin_v7, net_v7, 7)
JCCL_EXPORT(ncclNetPlugin_v8, net_v8, 8)
JCCL_EXPORT(ncclNetPlugin_v9, net_v9, 9)
JCCL_EXPORT(ncclNetPlugin_v10, net_v10, 10)
JCCL_EXPORT(ncclNetPlugin_v11, net_v11, 11)
JCCL_EXPORT(ncclNetPlugin_v12, net_v12, 12)
