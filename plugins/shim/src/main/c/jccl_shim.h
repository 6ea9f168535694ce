/*
 * The shim's internal interface between its C half and its Java half (package io.jccl.shim).
 *
 * NCCL calls the per-version adapters of shim_net.c / shim_collnet.c; each adapter converts its
 * version's arguments and calls one entry of a canonical operation table. The Java side fills those
 * tables with FFM upcall stubs once, at bootstrap, so a call reaches Java through one indirect call
 * and no lookup. Every pointer crosses as an int64_t (LP64), so that the Java side reads plain longs
 * and allocates nothing per call.
 *
 * The layouts below are mirrored by io.jccl.shim.ShimAbi; JCCL_SHIM_ABI guards them.
 */
#ifndef JCCL_SHIM_H
#define JCCL_SHIM_H

#include "ncclnet.h"

/* Bumped whenever a struct or an operation list below changes; ShimAbi.VERSION must match. */
#define JCCL_SHIM_ABI 1

/* The oldest and newest ncclNet / ncclCollNet versions exported. */
#define JCCL_MIN_API 6
#define JCCL_MAX_API 12

/* The most buffers of one grouped receive the v6-v8 adapters convert (NCCL posts at most 8). */
#define JCCL_MAX_GROUPED_RECV 64

#define J(p) ((int64_t)(intptr_t)(p))

/* A device's properties as the Java side reports them; the adapters turn them into each version's struct. */
typedef struct {
    const char* name;
    const char* pciPath;
    uint64_t guid;
    int32_t ptrSupport;
    int32_t regIsGlobal;
    int32_t forceFlush;
    int32_t speed;
    int32_t port;
    float latency;
    int32_t maxComms;
    int32_t maxRecvs;
    uint64_t maxP2pBytes;
    uint64_t maxCollBytes;
} jccl_props;

/* ncclNet, canonical form: the newest semantics, sizes as int64, pointers as int64. Order is ABI. */
typedef struct {
    int32_t (*init)(int64_t ctxOut, int64_t commId, int32_t trafficClass, int32_t apiVersion);
    int32_t (*devices)(int64_t ndevOut);
    int32_t (*getProperties)(int32_t dev, int64_t propsOut);
    int32_t (*listen)(int64_t ctx, int32_t dev, int64_t handle, int64_t listenCommOut);
    int32_t (*connect)(int64_t ctx, int32_t dev, int64_t handle, int64_t sendCommOut);
    int32_t (*accept)(int64_t listenComm, int64_t recvCommOut);
    int32_t (*regMr)(int64_t comm, int64_t data, int64_t size, int32_t type, int64_t mhandleOut);
    int32_t (*regMrDmaBuf)(int64_t comm, int64_t data, int64_t size, int32_t type, int64_t offset, int32_t fd,
                           int64_t mhandleOut);
    int32_t (*deregMr)(int64_t comm, int64_t mhandle);
    int32_t (*isend)(int64_t sendComm, int64_t data, int64_t size, int32_t tag, int64_t mhandle, int64_t requestOut);
    /* sizes: size_t[n] */
    int32_t (*irecv)(int64_t recvComm, int32_t n, int64_t data, int64_t sizes, int64_t tags, int64_t mhandles,
                     int64_t requestOut);
    /* sizes: int[n] */
    int32_t (*iflush)(int64_t recvComm, int32_t n, int64_t data, int64_t sizes, int64_t mhandles, int64_t requestOut);
    int32_t (*test)(int64_t request, int64_t doneOut, int64_t sizesOut);
    int32_t (*closeSend)(int64_t sendComm);
    int32_t (*closeRecv)(int64_t recvComm);
    int32_t (*closeListen)(int64_t listenComm);
    int32_t (*finalize)(int64_t ctx);
} jccl_net_ops;

/* ncclCollNet, canonical form. Order is ABI. */
typedef struct {
    int32_t (*init)(int64_t ctxOut, int64_t commId, int32_t apiVersion);
    int32_t (*devices)(int64_t ndevOut);
    int32_t (*getProperties)(int32_t dev, int64_t propsOut);
    int32_t (*listen)(int64_t ctx, int32_t dev, int64_t handle, int64_t listenCommOut);
    int32_t (*connect)(int64_t handles, int32_t nranks, int32_t rank, int64_t listenComm, int64_t collCommOut);
    int32_t (*reduceSupport)(int32_t dataType, int32_t redOp, int64_t supportedOut);
    int32_t (*regMr)(int64_t comm, int64_t data, int64_t size, int32_t type, int64_t mhandleOut);
    int32_t (*regMrDmaBuf)(int64_t comm, int64_t data, int64_t size, int32_t type, int64_t offset, int32_t fd,
                           int64_t mhandleOut);
    int32_t (*deregMr)(int64_t comm, int64_t mhandle);
    int32_t (*iallreduce)(int64_t comm, int64_t sendData, int64_t recvData, int64_t count, int32_t dataType,
                          int32_t redOp, int64_t sendMhandle, int64_t recvMhandle, int64_t requestOut);
    int32_t (*iflush)(int64_t comm, int64_t data, int32_t size, int64_t mhandle, int64_t requestOut);
    int32_t (*test)(int64_t request, int64_t doneOut, int64_t sizeOut);
    int32_t (*closeColl)(int64_t collComm);
    int32_t (*closeListen)(int64_t listenComm);
    int32_t (*finalize)(int64_t ctx);
} jccl_collnet_ops;

#define JCCL_NET_OPS (sizeof(jccl_net_ops) / sizeof(void*))
#define JCCL_COLLNET_OPS (sizeof(jccl_collnet_ops) / sizeof(void*))

/* What the C half hands the Java half at bootstrap (one per process). */
typedef struct {
    int32_t abiVersion;
    int32_t netOpCount;
    int32_t collNetOpCount;
    int32_t maxApiVersion;
    const char* netName;          /* the Java transport to export as ncclNet */
    const char* collNetName;      /* the Java transport to export as ncclCollNet; "" = none */
    const char* libraryPath;      /* this library's file */
    void (*log)(int32_t level, uint64_t flags, const char* message);
    jccl_net_ops* netOps;         /* filled by Java */
    jccl_collnet_ops* collNetOps; /* filled by Java */
} jccl_services;

extern jccl_net_ops jccl_net;
extern jccl_collnet_ops jccl_collnet;

/* Names NCCL sees (ncclNet_t.name, ncclCollNet_t.name), fixed when the library loads. */
extern char jccl_net_name[128];
extern char jccl_collnet_name[128];

/* Logging through NCCL's logger (the latest one init gave us), pre-formatted, fmt "%s". */
void jccl_set_logger(ncclDebugLogger_t logger);
void jccl_log(int level, unsigned long flags, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

/* Whether ncclNetPlugin_v<version> / ncclCollNetPlugin_v<version> is visible (JCCL_SHIM_MAX_API_VERSION). */
int jccl_exported(int version);

/*
 * Makes the Java half ready: joins the JVM running in this process or starts one, then bootstraps
 * io.jccl.shim.ShimBridge, which fills jccl_net and jccl_collnet. Idempotent and thread-safe; a
 * failure is remembered, logged as one WARN line naming the variable to set, and returned again.
 */
ncclResult_t jccl_java_ready(const char* what, int apiVersion);

/* Starts or joins the JVM and runs the bootstrap (shim_jvm.c). Fills err on failure. */
ncclResult_t jccl_jvm_bootstrap(jccl_services* services, char* err, size_t errlen, char* how, size_t howlen);

/* This library's path, found with dladdr. */
const char* jccl_library_path(void);

/*
 * Exports SYMBOL as a GNU indirect symbol: dlsym runs the resolver, which returns the table, or NULL
 * (symbol absent) for a version above JCCL_SHIM_MAX_API_VERSION.
 */
typedef void (*jccl_symbol)(void);

#define JCCL_EXPORT(SYMBOL, TABLE, VERSION)                                                       \
    static jccl_symbol resolve_##SYMBOL(void) {                                                  \
        return jccl_exported(VERSION) ? (jccl_symbol) (const void*) &(TABLE) : (jccl_symbol) 0; \
    }                                                                                             \
    __attribute__((visibility("default"))) void SYMBOL(void) __attribute__((ifunc("resolve_" #SYMBOL)));

#endif
