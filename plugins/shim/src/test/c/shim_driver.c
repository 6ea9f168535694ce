/*
 * A stand-in for NCCL: loads a net plugin library the way NCCL does (dlopen, newest
 * ncclNetPlugin_vN first) and drives it from C, so the shim's JVM start path, its version
 * adapters and its per-call cost can be checked without a GPU. Speaks v6, v11 and v12.
 *
 *   jccl-shim-driver LIBRARY exchange   init twice (net and, from v11, CollNet, as NCCL 2.28 does), connect
 *                                       a loopback pair, move 0 B..4 MiB and a grouped receive with
 *                                       checked contents, close, finalize as ncclCommDestroy does
 *   jccl-shim-driver LIBRARY bench N    ns per test() of a pending receive and per iflush() of host
 *                                       memory (no work for the transport: the bridge alone), best
 *                                       of 5 rounds of N calls; ns per 8-byte isend/irecv/test
 *                                       round, best of 5 rounds of N/10
 *   jccl-shim-driver LIBRARY warmup N [SETUP_MS]
 *                                       times each of N 8-byte isend/irecv/test rounds from the first,
 *                                       printing the mean of rounds 1-10, 11-100, ... (the JVM's
 *                                       warm-up as NCCL's first calls meet it); SETUP_MS (default 0)
 *                                       is slept after init, as long as NCCL's communicator set-up
 *   jccl-shim-driver LIBRARY init       init only; prints the result code (for failure paths)
 *   jccl-shim-driver LIBRARY reload     exchange, dlclose, then reopen as NCCL 2.28/2.29 do for the
 *                                       next communicator (by the default name libnccl-net.so, the
 *                                       path forgotten) and exchange again
 *   jccl-shim-driver LIBRARY cycles N   N communicators' lives in turn (init, connect, exchange, close,
 *                                       finalize), printing the process's open fds and threads after
 *                                       each: what a destroy leaves behind grows with N
 *   jccl-shim-driver LIBRARY frozen-peer IDLE_MS
 *                                       a second process connects and then idles for IDLE_MS (the
 *                                       pending receive must stay pending), then is frozen with
 *                                       SIGSTOP while it reads a big send; prints how long the
 *                                       receive and the send took to fail and their codes (NCCL's
 *                                       proxy would see the same from test()), then closes all as
 *                                       ncclCommAbort does, each call bounded, the peer still frozen
 *
 * Prints "version N" first, log lines as "LOG <level> <message>", and "OK" on success.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ncclnet.h"

static int version;
static ncclNet_v6_t* v6;
static ncclNet_v11_t* v11; /* v12 has the same function table; only getProperties' struct differs */
static ncclCollNet_v11_t* collnet11; /* ncclCollNetPlugin_v11 or _v12, looked up beside a v11+ net */

static void logger(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
    (void) flags;
    (void) file;
    (void) line;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("LOG %d %s\n", level, buf);
    fflush(stdout);
}

#define CHECK(call)                                                                     \
    do {                                                                                \
        ncclResult_t r_ = (call);                                                       \
        if (r_ != ncclSuccess) {                                                        \
            printf("FAILED %s = %d at line %d\n", #call, r_, __LINE__);                 \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

/* ---- the calls, whichever version was found ---------------------------------------------------- */

static ncclResult_t p_init(void** ctx, uint64_t commId) {
    if (v6) {
        return v6->init(logger);
    }
    ncclNetCommConfig_v10_t config = {-1};
    return v11->init(ctx, commId, &config, logger, NULL);
}

static ncclResult_t p_devices(int* n) {
    return v6 ? v6->devices(n) : v11->devices(n);
}

static ncclResult_t p_name(int dev, char** name, int* maxRecvs) {
    ncclResult_t r;
    if (v6) {
        ncclNetProperties_v6_t p;
        r = v6->getProperties(dev, &p);
        *name = p.name;
        *maxRecvs = p.maxRecvs;
    } else if (version == 11) {
        ncclNetProperties_v11_t p;
        r = v11->getProperties(dev, (void*) &p);
        *name = p.name;
        *maxRecvs = p.maxRecvs;
        if (r == ncclSuccess && (p.vProps.ndevs != 1 || p.vProps.devs[0] != dev || p.maxP2pBytes == 0)) {
            printf("FAILED v11 properties: vProps %d/%d maxP2pBytes %zu\n", p.vProps.ndevs, p.vProps.devs[0],
                   p.maxP2pBytes);
            exit(1);
        }
    } else {
        ncclNetProperties_v12_t p;
        r = ((ncclNet_v12_t*) v11)->getProperties(dev, &p);
        *name = p.name;
        *maxRecvs = p.maxRecvs;
        if (r == ncclSuccess && (p.railId != -1 || p.planeId != -1 || p.maxMultiRequestSize != 1)) {
            printf("FAILED v12 properties: rail %d plane %d maxMultiRequestSize %d\n", p.railId, p.planeId,
                   p.maxMultiRequestSize);
            exit(1);
        }
    }
    return r;
}

/* The pointer types device dev takes, as NCCL reads them. */
static int p_ptr_support(int dev) {
    if (v6) {
        ncclNetProperties_v6_t p;
        return v6->getProperties(dev, &p) == ncclSuccess ? p.ptrSupport : -1;
    }
    if (version == 11) {
        ncclNetProperties_v11_t p;
        return v11->getProperties(dev, (void*) &p) == ncclSuccess ? p.ptrSupport : -1;
    }
    ncclNetProperties_v12_t p;
    return ((ncclNet_v12_t*) v11)->getProperties(dev, &p) == ncclSuccess ? p.ptrSupport : -1;
}

static ncclResult_t p_listen(void* ctx, void* handle, void** lc) {
    return v6 ? v6->listen(0, handle, lc) : v11->listen(ctx, 0, handle, lc);
}

static ncclResult_t p_connect(void* ctx, void* handle, void** sc) {
    ncclNetDeviceHandle_v7_t* dev = NULL;
    return v6 ? v6->connect(0, handle, sc) : v11->connect(ctx, 0, handle, sc, &dev);
}

static ncclResult_t p_accept(void* lc, void** rc) {
    ncclNetDeviceHandle_v7_t* dev = NULL;
    return v6 ? v6->accept(lc, rc) : v11->accept(lc, rc, &dev);
}

static ncclResult_t p_regMr(void* comm, void* data, size_t size, void** mh) {
    return v6 ? v6->regMr(comm, data, (int) size, NCCL_PTR_HOST, mh) : v11->regMr(comm, data, size, NCCL_PTR_HOST, mh);
}

static ncclResult_t p_deregMr(void* comm, void* mh) {
    return v6 ? v6->deregMr(comm, mh) : v11->deregMr(comm, mh);
}

static ncclResult_t p_isend(void* sc, void* data, size_t size, int tag, void* mh, void** req) {
    return v6 ? v6->isend(sc, data, (int) size, tag, mh, req) : v11->isend(sc, data, size, tag, mh, NULL, req);
}

static ncclResult_t p_irecv(void* rc, int n, void** data, size_t* sizes, int* tags, void** mhs, void** req) {
    if (v6) {
        int small[8];
        for (int i = 0; i < n; i++) {
            small[i] = (int) sizes[i];
        }
        return v6->irecv(rc, n, data, small, tags, mhs, req);
    }
    void* phandles[8] = {0};
    /* As NCCL does for LL/LL128 receives of one buffer: the optional-completion hint. */
    *req = n == 1 ? (void*) 0x1 : NULL;
    return v11->irecv(rc, n, data, sizes, tags, mhs, phandles, req);
}

static ncclResult_t p_iflush(void* rc, int n, void** data, int* sizes, void** mhs, void** req) {
    return v6 ? v6->iflush(rc, n, data, sizes, mhs, req) : v11->iflush(rc, n, data, sizes, mhs, req);
}

static ncclResult_t p_test(void* req, int* done, int* sizes) {
    return v6 ? v6->test(req, done, sizes) : v11->test(req, done, sizes);
}

static ncclResult_t p_close(void* sc, void* rc, void* lc) {
    ncclResult_t r = v6 ? v6->closeSend(sc) : v11->closeSend(sc);
    if (r == ncclSuccess) {
        r = v6 ? v6->closeRecv(rc) : v11->closeRecv(rc);
    }
    if (r == ncclSuccess) {
        r = v6 ? v6->closeListen(lc) : v11->closeListen(lc);
    }
    return r;
}

/* ---- scenarios --------------------------------------------------------------------------------- */

typedef struct {
    void* ctx;
    void* lc;
    void* sc;
    void* rc;
} pair;

static void connect_pair(pair* p) {
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    memset(handle, 0, sizeof handle);
    CHECK(p_listen(p->ctx, handle, &p->lc));
    if (p->lc == NULL) {
        printf("FAILED listen returned no comm\n");
        exit(1);
    }
    p->sc = p->rc = NULL;
    for (long spins = 0; p->sc == NULL || p->rc == NULL; spins++) {
        if (p->sc == NULL) {
            CHECK(p_connect(p->ctx, handle, &p->sc));
        }
        if (p->rc == NULL) {
            CHECK(p_accept(p->lc, &p->rc));
        }
        if (spins > 50000000L) {
            printf("FAILED connection not established\n");
            exit(1);
        }
    }
}

static void wait_done(void* req, int* sizes) {
    int done = 0;
    for (long spins = 0; !done; spins++) {
        CHECK(p_test(req, &done, sizes));
        if (spins > 200000000L) {
            printf("FAILED request never completed\n");
            exit(1);
        }
    }
}

/* One message of size bytes, pattern-checked; returns 0 on success. */
static void transfer(pair* p, char* src, char* dst, void* smh, void* rmh, size_t size, size_t capacity, int seed) {
    for (size_t i = 0; i < size; i++) {
        src[i] = (char) (i * 31 + seed);
    }
    memset(dst, 0x5a, capacity);
    void* rreq = NULL;
    void* data[1] = {dst};
    size_t sizes[1] = {capacity};
    int tags[1] = {7};
    void* mhs[1] = {rmh};
    for (int i = 0; rreq == NULL; i++) {
        CHECK(p_irecv(p->rc, 1, data, sizes, tags, mhs, &rreq));
        if (i > 10000000) {
            printf("FAILED irecv never accepted\n");
            exit(1);
        }
    }
    void* sreq = NULL;
    for (long i = 0; sreq == NULL; i++) {
        CHECK(p_isend(p->sc, src, size, 7, smh, &sreq));
        if (sreq == NULL) {
            int done;
            CHECK(p_test(rreq, &done, NULL)); /* progress the receiver's clear-to-send */
            if (done) {
                printf("FAILED receive completed before its send\n");
                exit(1);
            }
        }
        if (i > 10000000L) {
            printf("FAILED isend never accepted\n");
            exit(1);
        }
    }
    int sent[64] = {0};
    int received[64] = {0};
    wait_done(sreq, sent);
    wait_done(rreq, received);
    if ((size_t) sent[0] != size || (size_t) received[0] != size) {
        printf("FAILED sizes: sent %d received %d expected %zu\n", sent[0], received[0], size);
        exit(1);
    }
    for (size_t i = 0; i < size; i++) {
        if (dst[i] != (char) (i * 31 + seed)) {
            printf("FAILED byte %zu of %zu differs\n", i, size);
            exit(1);
        }
    }
}

static void grouped_receive(pair* p, char* src, char* dst, void* smh, void* rmh) {
    /* Two buffers, tags 1 and 2; sends arrive tag 2 first and still land by tag. */
    void* data[2] = {dst, dst + 4096};
    size_t sizes[2] = {4096, 4096};
    int tags[2] = {1, 2};
    void* mhs[2] = {rmh, rmh};
    void* rreq = NULL;
    while (rreq == NULL) {
        CHECK(p_irecv(p->rc, 2, data, sizes, tags, mhs, &rreq));
    }
    memset(src, 'b', 300);
    memset(src + 4096, 'a', 100);
    void* s2 = NULL;
    void* s1 = NULL;
    while (s2 == NULL) {
        CHECK(p_isend(p->sc, src, 300, 2, smh, &s2));
        int done;
        if (s2 == NULL) {
            CHECK(p_test(rreq, &done, NULL));
        }
    }
    while (s1 == NULL) {
        CHECK(p_isend(p->sc, src + 4096, 100, 1, smh, &s1));
    }
    int got[64] = {0};
    wait_done(s1, NULL);
    wait_done(s2, NULL);
    wait_done(rreq, got);
    if (got[0] != 100 || got[1] != 300 || dst[0] != 'a' || dst[99] != 'a' || dst[4096] != 'b' || dst[4096 + 299] != 'b') {
        printf("FAILED grouped receive: sizes %d %d\n", got[0], got[1]);
        exit(1);
    }
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Runs BODY n times per round, ROUNDS rounds (the JIT behind the upcalls settles), and keeps the
   fastest round's ns per call. */
#define ROUNDS 5
#define BEST_NS(result, n, BODY)                                    \
    do {                                                            \
        (result) = 1e30;                                            \
        for (int round_ = 0; round_ < ROUNDS; round_++) {           \
            double t0_ = now_ns();                                  \
            for (long i_ = 0; i_ < (n); i_++) {                     \
                BODY;                                               \
            }                                                       \
            double ns_ = (now_ns() - t0_) / (double) (n);           \
            (result) = ns_ < (result) ? ns_ : (result);             \
        }                                                           \
    } while (0)

/* One 8-byte isend/irecv/test round, as the bench's pairs: both posted, then tested until done. */
static void pair_round(pair* p, char* src, char* dst, void* smh, void* rmh) {
    void* data[1] = {dst};
    size_t sizes[1] = {8};
    int tags[1] = {7};
    void* mhs[1] = {rmh};
    int done = 0;
    void* r = NULL;
    void* s = NULL;
    while (r == NULL) {
        CHECK(p_irecv(p->rc, 1, data, sizes, tags, mhs, &r));
    }
    while (s == NULL) {
        CHECK(p_isend(p->sc, src, 8, 7, smh, &s));
        if (s == NULL) {
            CHECK(p_test(r, &done, NULL));
        }
    }
    wait_done(s, NULL);
    wait_done(r, NULL);
}

static void bench(pair* p, char* src, char* dst, void* smh, void* rmh, long n) {
    void* data[1] = {dst};
    size_t sizes[1] = {8};
    int tags[1] = {7};
    void* mhs[1] = {rmh};
    int done = 0;

    /* test() of a receive no send matches: the bridge's cost plus the transport's poll. */
    void* rreq = NULL;
    while (rreq == NULL) {
        CHECK(p_irecv(p->rc, 1, data, sizes, tags, mhs, &rreq));
    }
    double testNs;
    BEST_NS(testNs, n, CHECK(p_test(rreq, &done, NULL)));

    /* iflush() of host memory: the transport has nothing to do, so this is the bridge alone. */
    int flushSizes[1] = {8};
    void* flushReq = NULL;
    double flushNs;
    BEST_NS(flushNs, n, CHECK(p_iflush(p->rc, 1, data, flushSizes, mhs, &flushReq)));
    if (flushReq != NULL) {
        printf("FAILED iflush of host memory returned a request\n");
        exit(1);
    }
    void* sreq = NULL;
    while (sreq == NULL) {
        CHECK(p_isend(p->sc, src, 8, 7, smh, &sreq));
    }
    wait_done(sreq, NULL);
    wait_done(rreq, NULL);

    /* isend + irecv + tests until both are done, 8 bytes, one after the other. */
    double pairNs;
    long rounds = n / 10 > 0 ? n / 10 : 1;
    BEST_NS(pairNs, rounds, pair_round(p, src, dst, smh, rmh));
    (void) src;
    printf("BENCH test_ns %.1f iflush_ns %.1f pair_ns %.1f iterations %ld\n", testNs, flushNs, pairNs, n);
}

/* The JVM's warm-up as NCCL's first calls meet it: each round timed from the very first, and the
   mean printed per decade of rounds (1-10, 11-100, ...), so that cold and warm are seen apart. */
static void warmup(pair* p, char* src, char* dst, void* smh, void* rmh, long n) {
    long start = 1;
    long end = 10;
    double sum = 0;
    double worst = 0;
    for (long i = 1; i <= n; i++) {
        double t0 = now_ns();
        pair_round(p, src, dst, smh, rmh);
        double ns = now_ns() - t0;
        sum += ns;
        worst = ns > worst ? ns : worst;
        if (i == end || i == n) {
            printf("WARMUP rounds %ld-%ld mean_ns %.0f max_ns %.0f\n", start, i, sum / (double) (i - start + 1), worst);
            start = i + 1;
            end *= 10;
            sum = 0;
            worst = 0;
        }
    }
}

/* Takes the newest ncclNetPlugin_vN of lib, as NCCL does; returns 0 if none (or one the driver does not speak). */
static int find_table(void* lib) {
    version = 0;
    v6 = NULL;
    v11 = NULL;
    for (int v = 12; v >= 6 && version == 0; v--) {
        char symbol[32];
        snprintf(symbol, sizeof symbol, "ncclNetPlugin_v%d", v);
        void* table = dlsym(lib, symbol);
        if (table != NULL) {
            version = v;
            if (v == 6) {
                v6 = table;
            } else if (v >= 11) {
                v11 = table;
            } else {
                printf("FAILED the driver speaks v6, v11 and v12; the library's newest is v%d\n", v);
                return 0;
            }
        }
    }
    if (version == 0) {
        printf("FAILED no ncclNetPlugin_vN symbol\n");
    }
    collnet11 = NULL;
    if (version >= 11) {
        collnet11 = dlsym(lib, version == 12 ? "ncclCollNetPlugin_v12" : "ncclCollNetPlugin_v11");
    }
    return version;
}

/*
 * The CollNet half of a communicator's life as NCCL 2.28/2.29 live it (src/plugin/net.cc):
 * at init, ncclCollNet->init(&comm->collNetContext, ...) then devices(); CollNet is enabled, and
 * comm->ncclCollNet set, only with at least one device. At destroy, ncclNetFinalize calls
 * comm->ncclCollNet->finalize(comm->collNetContext) whenever that context is not NULL, through
 * comm->ncclCollNet even when it is NULL. A CollNet that hands out a context but reports no
 * devices therefore crashes NCCL (SIGSEGV at 0x90, finalize's offset in the table).
 */
typedef struct {
    void* ctx;
    ncclCollNet_v11_t* table; /* comm->ncclCollNet: NULL unless enabled */
} collnet_life;

static collnet_life collnet_init(uint64_t commId) {
    collnet_life life = {NULL, NULL};
    if (collnet11 == NULL) {
        return life;
    }
    int ndev = 0;
    if (collnet11->init(&life.ctx, commId, logger) == ncclSuccess && collnet11->devices(&ndev) == ncclSuccess
        && ndev > 0) {
        life.table = collnet11;
    }
    printf("collnet %s, context %s\n", life.table ? "enabled" : "disabled", life.ctx ? "set" : "NULL");
    return life;
}

static void collnet_finalize(collnet_life* life) {
    if (life->ctx == NULL) {
        return;
    }
    if (life->table == NULL) {
        printf("FAILED the CollNet reported no devices but left a context: NCCL 2.28 finalizes it through a NULL "
               "ncclCollNet table at ncclCommDestroy (SIGSEGV at address 0x%zx)\n",
               offsetof(ncclCollNet_v11_t, finalize));
        exit(1);
    }
    CHECK(life->table->finalize(life->ctx));
}

/* One communicator's life, as NCCL 2.28+ lives it: init (twice, v11+), transfers or the benchmark, finalize. */
static long setup_ms; /* warmup's SETUP_MS */

static void session(const char* mode, long benchIterations) {
    pair p = {0};
    CHECK(p_init(&p.ctx, 1));
    if (setup_ms > 0) {
        usleep((useconds_t) (setup_ms * 1000));
    }
    void* second = NULL;
    collnet_life firstCollNet = collnet_init(1);
    collnet_life secondCollNet = {NULL, NULL};
    if (!v6) {
        CHECK(p_init(&second, 2)); /* NCCL 2.28+: init per communicator */
        if (second == NULL || second == p.ctx) {
            printf("FAILED the second init returned context %p (first %p)\n", second, p.ctx);
            exit(1);
        }
        secondCollNet = collnet_init(2);
    }
    int ndev = 0;
    CHECK(p_devices(&ndev));
    char* name;
    int maxRecvs;
    CHECK(p_name(0, &name, &maxRecvs));
    printf("devices %d dev0 %s maxRecvs %d\n", ndev, name, maxRecvs);

    connect_pair(&p);
    size_t capacity = 4u << 20;
    char* src = aligned_alloc(4096, capacity);
    char* dst = aligned_alloc(4096, capacity);
    void *smh, *rmh;
    CHECK(p_regMr(p.sc, src, capacity, &smh));
    CHECK(p_regMr(p.rc, dst, capacity, &rmh));

    if (strcmp(mode, "bench") == 0) {
        bench(&p, src, dst, smh, rmh, benchIterations);
    } else if (strcmp(mode, "warmup") == 0) {
        warmup(&p, src, dst, smh, rmh, benchIterations);
    } else {
        size_t sizes[] = {0, 1, 8, 1000, 4096, 65536, 1u << 20, 4u << 20};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            transfer(&p, src, dst, smh, rmh, sizes[i], capacity, (int) i);
        }
        if (maxRecvs >= 2) {
            grouped_receive(&p, src, dst, smh, rmh);
        }
        /* Garbage handles get an error, not a crash. */
        int done;
        if (p_test((void*) 0x1234, &done, NULL) == ncclSuccess) {
            printf("FAILED test() of a garbage request succeeded\n");
            exit(1);
        }
        printf("transfers ok\n");
    }
    CHECK(p_deregMr(p.sc, smh));
    CHECK(p_deregMr(p.rc, rmh));
    CHECK(p_close(p.sc, p.rc, p.lc));
    if (!v6) {
        CHECK(v11->finalize(second));
        collnet_finalize(&secondCollNet);
        CHECK(v11->finalize(p.ctx));
        collnet_finalize(&firstCollNet);
    }
    free(src);
    free(dst);
}

/* Entries of a /proc/self directory (open fds, threads), without . and .. */
static int count_entries(const char* path) {
    DIR* d = opendir(path);
    if (d == NULL) {
        return -1;
    }
    int n = 0;
    for (struct dirent* e; (e = readdir(d)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n - (strcmp(path, "/proc/self/fd") == 0); /* the directory's own fd */
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/*
 * Polls a request that must not complete (its peer is idle, frozen or gone) for ms milliseconds.
 * Returns its first non-success code and when it came, 0 if none came, or -1 if it completed.
 */
static int poll_pending(void* req, double ms, double* failedAfterMs) {
    double start = now_ms();
    while (now_ms() - start < ms) {
        int done = 0;
        ncclResult_t r = p_test(req, &done, NULL);
        if (r != ncclSuccess) {
            *failedAfterMs = now_ms() - start;
            return r;
        }
        if (done) {
            return -1;
        }
        usleep(200);
    }
    return 0;
}

static int poll_receive(void* req, double ms, double* failedAfterMs) {
    int r = poll_pending(req, ms, failedAfterMs);
    if (r < 0) {
        printf("FAILED the receive completed, but the peer sent nothing\n");
        exit(1);
    }
    return r;
}

/* Runs a close call and fails the scenario if it takes longer than a bound: NCCL's abort makes
   these calls while the frozen peer still holds its sockets open. */
#define TIMED_CLOSE(call)                                                                    \
    do {                                                                                     \
        double t0_ = now_ms();                                                               \
        ncclResult_t r_ = (call);                                                            \
        double took_ = now_ms() - t0_;                                                       \
        printf("abort: %s = %d in %.0f ms\n", #call, r_, took_);                             \
        if (took_ > 2000) {                                                                  \
            printf("FAILED %s took %.0f ms with the peer frozen (NCCL's abort would hang)\n", \
                   #call, took_);                                                            \
            failed = 1;                                                                      \
        }                                                                                    \
    } while (0)

/*
 * NCCL's view of a frozen peer: a pending receive from a process that stops (SIGSTOP) must fail
 * with ncclRemoteError within the transport's bound, while a peer that is alive but has nothing to
 * send yet must not be declared dead. A send caught mid-transfer (the peer stopped while reading)
 * must fail too, and then what ncclCommAbort does must return promptly with the peer still frozen:
 * deregister, close every comm, finalize.
 */
static int frozen_peer(double idleMs) {
    enum { BIG = 256 << 20 };
    int handlePipe[2], readyPipe[2], peerHandlePipe[2];
    if (pipe(handlePipe) != 0 || pipe(readyPipe) != 0 || pipe(peerHandlePipe) != 0) {
        printf("FAILED pipe\n");
        return 1;
    }
    pid_t peer = fork(); /* before either process starts a JVM */
    if (peer == 0) {
        char handle[NCCL_NET_HANDLE_MAXSIZE];
        if (read(handlePipe[0], handle, sizeof handle) != (ssize_t) sizeof handle) {
            _exit(2);
        }
        void* ctx = NULL;
        void* sc = NULL;
        void* lc = NULL;
        void* rc = NULL;
        if (p_init(&ctx, 2) != ncclSuccess) {
            _exit(3);
        }
        char mine[NCCL_NET_HANDLE_MAXSIZE];
        memset(mine, 0, sizeof mine);
        if (p_listen(ctx, mine, &lc) != ncclSuccess ||
            write(peerHandlePipe[1], mine, sizeof mine) != (ssize_t) sizeof mine) {
            _exit(4);
        }
        for (long spins = 0; sc == NULL || rc == NULL; spins++) {
            if ((sc == NULL && p_connect(ctx, handle, &sc) != ncclSuccess) ||
                (rc == NULL && p_accept(lc, &rc) != ncclSuccess) || spins > 50000000L) {
                _exit(5);
            }
        }
        char* big = malloc(BIG);
        void* mh;
        void* req = NULL;
        int tag = 0;
        size_t size = BIG;
        if (big == NULL || p_regMr(rc, big, BIG, &mh) != ncclSuccess) {
            _exit(6);
        }
        while (req == NULL) {
            if (p_irecv(rc, 1, (void**) &big, &size, &tag, &mh, &req) != ncclSuccess) {
                _exit(7);
            }
        }
        char ok = 1;
        if (write(readyPipe[1], &ok, 1) != 1) {
            _exit(8);
        }
        for (;;) { /* receiving the big message slowly, until the survivor stops this process */
            int done = 0;
            if (p_test(req, &done, NULL) != ncclSuccess || done) {
                _exit(9);
            }
            usleep(1000);
        }
    }
    pair p = {0};
    CHECK(p_init(&p.ctx, 1));
    char handle[NCCL_NET_HANDLE_MAXSIZE];
    memset(handle, 0, sizeof handle);
    CHECK(p_listen(p.ctx, handle, &p.lc));
    if (write(handlePipe[1], handle, sizeof handle) != (ssize_t) sizeof handle) {
        printf("FAILED handing the handle to the peer\n");
        return 1;
    }
    char peerHandle[NCCL_NET_HANDLE_MAXSIZE];
    if (read(peerHandlePipe[0], peerHandle, sizeof peerHandle) != (ssize_t) sizeof peerHandle) {
        printf("FAILED the peer died before listening\n");
        return 1;
    }
    for (long spins = 0; p.rc == NULL || p.sc == NULL; spins++) {
        if (p.rc == NULL) {
            CHECK(p_accept(p.lc, &p.rc));
        }
        if (p.sc == NULL) {
            CHECK(p_connect(p.ctx, peerHandle, &p.sc));
        }
        if (spins > 50000000L) {
            printf("FAILED the peer never connected\n");
            kill(peer, SIGKILL);
            return 1;
        }
    }
    char ok;
    if (read(readyPipe[0], &ok, 1) != 1) {
        printf("FAILED the peer died while connecting\n");
        return 1;
    }
    char* dst = aligned_alloc(4096, 4096);
    void* rmh;
    CHECK(p_regMr(p.rc, dst, 4096, &rmh));
    void* req = NULL;
    void* data[1] = {dst};
    size_t sizes[1] = {4096};
    int tags[1] = {0};
    void* mhs[1] = {rmh};
    while (req == NULL) {
        CHECK(p_irecv(p.rc, 1, data, sizes, tags, mhs, &req));
    }
    double failedAfter = 0;
    int early = poll_receive(req, idleMs, &failedAfter);
    if (early != 0) {
        printf("FAILED the receive from an idle but live peer failed with %d after %.0f ms\n", early, failedAfter);
        kill(peer, SIGKILL);
        return 1;
    }
    printf("idle peer: the receive stayed pending for %.0f ms\n", idleMs);

    /* A big send the peer reads slowly (one test() a millisecond): stopped mid-transfer, its bytes
       fill both kernels' socket buffers. */
    char* big = calloc(1, BIG);
    void* smh;
    void* sreq = NULL;
    CHECK(p_regMr(p.sc, big, BIG, &smh));
    while (sreq == NULL) {
        CHECK(p_isend(p.sc, big, BIG, 0, smh, &sreq));
    }
    for (int i = 0; i < 50; i++) {
        int done = 0;
        CHECK(p_test(sreq, &done, NULL));
        usleep(1000);
    }
    kill(peer, SIGSTOP);
    int code = poll_receive(req, 120000, &failedAfter);
    printf("frozen peer: receive failed with %d after %.0f ms\n", code, failedAfter);
    double sendFailedAfter = 0;
    int sendCode = poll_pending(sreq, 10000, &sendFailedAfter); /* -1: all went out before the freeze */
    printf("frozen peer: send failed with %d\n", sendCode);

    int failed = code == 0 || sendCode <= 0;
    TIMED_CLOSE(p_deregMr(p.rc, rmh));
    TIMED_CLOSE(p_deregMr(p.sc, smh));
    TIMED_CLOSE(v6 ? v6->closeSend(p.sc) : v11->closeSend(p.sc));
    TIMED_CLOSE(v6 ? v6->closeRecv(p.rc) : v11->closeRecv(p.rc));
    TIMED_CLOSE(v6 ? v6->closeListen(p.lc) : v11->closeListen(p.lc));
    if (v11) {
        TIMED_CLOSE(v11->finalize(p.ctx));
    }
    kill(peer, SIGKILL);
    waitpid(peer, NULL, 0);
    free(big);
    free(dst);
    return failed;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s LIBRARY exchange|bench N|warmup N|init|props|reload|frozen-peer IDLE_MS\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        printf("FAILED dlopen: %s\n", dlerror());
        return 1;
    }
    if (find_table(lib) == 0) {
        return 1;
    }
    printf("version %d name %s\n", version, v6 ? v6->name : v11->name);

    if (strcmp(argv[2], "cycles") == 0) {
        long n = argc > 3 ? atol(argv[3]) : 5;
        for (long i = 1; i <= n; i++) {
            session("exchange", 0);
            printf("cycle %ld fds %d threads %d\n", i, count_entries("/proc/self/fd"),
                   count_entries("/proc/self/task"));
        }
        printf("OK\n");
        return 0;
    }
    if (strcmp(argv[2], "frozen-peer") == 0) {
        int rc = frozen_peer(argc > 3 ? atof(argv[3]) : 3000);
        if (rc == 0) {
            printf("OK\n");
        }
        return rc;
    }
    if (strcmp(argv[2], "props") == 0) {
        /* what NCCL is told device 0 takes (called twice: NCCL asks more than once) */
        void* ctx = NULL;
        printf("init %d\n", p_init(&ctx, 1));
        printf("ptrSupport %d\n", p_ptr_support(0));
        printf("ptrSupport %d\n", p_ptr_support(0));
        return 0;
    }
    if (strcmp(argv[2], "init") == 0) {
        void* ctx = NULL;
        printf("init %d\n", p_init(&ctx, 1));
        /* the threads the plugin's start left in the process, by name */
        DIR* d = opendir("/proc/self/task");
        printf("threads:");
        for (struct dirent* e; d != NULL && (e = readdir(d)) != NULL;) {
            char path[300], name[64] = "";
            snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
            FILE* f = e->d_name[0] != '.' ? fopen(path, "r") : NULL;
            if (f != NULL) {
                if (fgets(name, sizeof name, f) != NULL) {
                    name[strcspn(name, "\n")] = 0;
                    printf(" [%s]", name);
                }
                fclose(f);
            }
        }
        printf("\n");
        if (d != NULL) {
            closedir(d);
        }
        return 0;
    }
    if (strcmp(argv[2], "warmup") == 0 && argc > 4) {
        setup_ms = atol(argv[4]);
    }
    session(argv[2], argc > 3 ? atol(argv[3]) : 100000);
    if (strcmp(argv[2], "reload") == 0) {
        /* NCCL 2.28/2.29: the last communicator is gone, the plugin is unloaded and its path forgotten;
           the next communicator opens the default name. */
        const void* before = v6 ? (const void*) v6 : (const void*) v11;
        dlclose(lib);
        lib = dlopen("libnccl-net.so", RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            printf("FAILED reopening by the default name: %s\n", dlerror());
            return 1;
        }
        if (find_table(lib) == 0) {
            return 1;
        }
        const void* after = v6 ? (const void*) v6 : (const void*) v11;
        printf("reopened %s library as libnccl-net.so\n", before == after ? "the same" : "ANOTHER");
        session("exchange", 0);
    }
    printf("OK\n");
    return 0;
}
