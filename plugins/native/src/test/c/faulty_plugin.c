/*
 * A deliberately faulty ncclNet plugin for the tests of the native-plugin host and of the kit.
 * One source, built once per fault (-DFAULT=...):
 *
 *   FAULT_INIT_FAILS     ncclNet_v11: init returns ncclSystemError.
 *   FAULT_NO_DEVICES     ncclNet_v11: init succeeds, devices() reports 0; finalize is NULL.
 *   FAULT_PROPS_FAIL     ncclNet_v11: one device, but getProperties and listen return ncclInternalError.
 *   FAULT_V10_ONE_DEVICE ncclNet_v10: one device whose getProperties succeeds; every connection call
 *                        returns ncclSystemError.
 *   FAULT_CRASH          ncclNet_v11: init writes through a NULL pointer (SIGSEGV), as a plugin with a
 *                        bug does; only a process boundary protects the caller.
 *
 * Besides its fault, the plugin checks that it is called the way NCCL calls plugins: init with a
 * logger (and, from v10, a profiler callback) that work, a v11 ctx out-pointer and config; a v10
 * init once per load; nothing but finalize after a failed init; nothing that names a device when
 * devices() said 0; no device index out of range. Every call NCCL would never make is recorded
 * (faulty_violations) and answered with ncclInternalError: where a real plugin would crash the
 * process, this one leaves a trace that the tests read.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef FAULT
#error "build with -DFAULT=FAULT_INIT_FAILS, FAULT_NO_DEVICES, FAULT_PROPS_FAIL, FAULT_V10_ONE_DEVICE or FAULT_CRASH"
#endif
#define FAULT_INIT_FAILS 1
#define FAULT_NO_DEVICES 2
#define FAULT_PROPS_FAIL 3
#define FAULT_V10_ONE_DEVICE 4
#define FAULT_CRASH 5

#define EXPORT __attribute__((visibility("default")))

/* ncclResult_t values (spec 1.1). */
enum { OK = 0, SYSTEM_ERROR = 2, INTERNAL_ERROR = 3, INVALID_ARGUMENT = 4 };

typedef void (*logger_fn)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
typedef int (*profiler_fn)(void** eHandle, int type, void* pHandle, int64_t pluginId, void* extData);

/* ncclNetProperties_v10_t (104 bytes) and _v11_t (112 bytes), spec 3.6 to 3.8. */
struct props {
    char* name;
    char* pciPath;
    uint64_t guid;
    int ptrSupport, regIsGlobal, forceFlush, speed, port;
    float latency;
    int maxComms, maxRecvs, netDeviceType, netDeviceVersion;
    struct { int ndevs; int devs[4]; } vProps;
    size_t maxP2pBytes, maxCollBytes;
    int maxMultiRequestSize; /* v11 only: the v10 caller's struct ends before it */
};

static char violations[4096];
static int initCalls;
static int initFailed;
static int ready;
static logger_fn logger;

/* What the host did that NCCL never does, separated by "; ", or "" (for the tests). */
EXPORT const char* faulty_violations(void) { return violations; }

/* How often init was entered (for the tests). */
EXPORT int faulty_init_calls(void) { return initCalls; }

static int violation(const char* what) {
    size_t used = strlen(violations);
    snprintf(violations + used, sizeof violations - used, "%s%s", used ? "; " : "", what);
    return INTERNAL_ERROR;
}

static int deviceCount(void) {
    return FAULT == FAULT_NO_DEVICES ? 0 : 1;
}

/* Calls that need a successful init and, where they name one, a device below devices(). */
static int usable(const char* call, int dev, int namesDevice) {
    char what[160];
    if (initFailed) {
        snprintf(what, sizeof what, "%s after a failed init", call);
        return violation(what);
    }
    if (!ready) {
        snprintf(what, sizeof what, "%s before init", call);
        return violation(what);
    }
    if (namesDevice && (dev < 0 || dev >= deviceCount())) {
        snprintf(what, sizeof what, "%s(dev %d) with %d device(s)", call, dev, deviceCount());
        return violation(what);
    }
    return OK;
}

static int commonInit(logger_fn log, profiler_fn prof, int wantProfiler) {
    initCalls++;
    if (initFailed) {
        return violation("init again after a failed init (NCCL disables the plugin)");
    }
    if (log == NULL) {
        return violation("init without a logger");
    }
    if (wantProfiler) {
        void* event = (void*) 1;
        if (prof == NULL) {
            return violation("init without a profiler callback");
        }
        if (prof(&event, 0, NULL, 0, NULL) != OK) {
            return violation("the profiler callback failed");
        }
    }
    logger = log;
    log(3, 0x10, __FILE__, __LINE__, "faulty plugin: init %d, fault %d, %s", initCalls, FAULT, "logging works");
    if (FAULT == FAULT_CRASH) {
        *(volatile int*) (uintptr_t) initCalls = 42;
    }
    if (FAULT == FAULT_INIT_FAILS) {
        initFailed = 1;
        log(2, 0x10, __FILE__, __LINE__, "faulty plugin: init fails on purpose");
        return SYSTEM_ERROR;
    }
    ready = 1;
    return OK;
}

static int devices(int* ndev) {
    int rc = usable("devices", 0, 0);
    if (rc != OK) {
        return rc;
    }
    if (ndev == NULL) {
        return violation("devices(NULL)");
    }
    *ndev = deviceCount();
    return OK;
}

static int fillProperties(int dev, struct props* p, int v11) {
    int rc = usable("getProperties", dev, 1);
    if (rc != OK) {
        return rc;
    }
    if (FAULT == FAULT_PROPS_FAIL) {
        return INTERNAL_ERROR;
    }
    p->name = "faulty0";
    p->pciPath = NULL;
    p->guid = 0x42;
    p->ptrSupport = 1;
    p->regIsGlobal = 0;
    p->forceFlush = 0;
    p->speed = 10000;
    p->port = 0;
    p->latency = 0;
    p->maxComms = 65536;
    p->maxRecvs = 1;
    p->netDeviceType = 0;
    p->netDeviceVersion = 0;
    p->vProps.ndevs = 1;
    p->vProps.devs[0] = dev;
    p->maxP2pBytes = (size_t) 1 << 30;
    p->maxCollBytes = (size_t) 1 << 30;
    if (v11) {
        p->maxMultiRequestSize = 1;
    }
    return OK;
}

/* The connection calls: none of them works in any fault; each still checks how it is called. */
static int listenCommon(int dev, void* handle, void** listenComm) {
    int rc = usable("listen", dev, 1);
    if (rc != OK) {
        return rc;
    }
    if (handle == NULL || listenComm == NULL) {
        return violation("listen with a NULL handle or out-pointer");
    }
    return FAULT == FAULT_PROPS_FAIL ? INTERNAL_ERROR : SYSTEM_ERROR;
}

static int connectCommon(int dev, void* handle, void** sendComm) {
    int rc = usable("connect", dev, 1);
    if (rc != OK) {
        return rc;
    }
    if (handle == NULL || sendComm == NULL) {
        return violation("connect with a NULL handle or out-pointer");
    }
    return SYSTEM_ERROR;
}

/* Without a comm from listen or connect, nothing below can be reached legitimately. */
static int noComm(const char* call) {
    char what[96];
    snprintf(what, sizeof what, "%s without any comm (listen and connect never succeed)", call);
    return violation(what);
}

static int accept_(void* l, void** r, void** d) { (void) l; (void) r; (void) d; return noComm("accept"); }
static int regMr_(void* c, void* data, size_t s, int t, void** m) { (void) c; (void) data; (void) s; (void) t; (void) m; return noComm("regMr"); }
static int deregMr_(void* c, void* m) { (void) c; (void) m; return noComm("deregMr"); }
static int isend_(void* c, void* data, size_t s, int tag, void* m, void* ph, void** r) {
    (void) c; (void) data; (void) s; (void) tag; (void) m; (void) ph; (void) r;
    return noComm("isend");
}
static int irecv_(void* c, int n, void** data, size_t* s, int* tags, void** m, void** ph, void** r) {
    (void) c; (void) n; (void) data; (void) s; (void) tags; (void) m; (void) ph; (void) r;
    return noComm("irecv");
}
static int test_(void* r, int* done, int* sizes) { (void) r; (void) done; (void) sizes; return noComm("test"); }
static int close_(void* c) { (void) c; return noComm("close"); }

#if FAULT == FAULT_V10_ONE_DEVICE

static int init10(logger_fn log, profiler_fn prof) {
    if (initCalls > 0 && !initFailed) {
        initCalls++;
        return violation("a v10 init called twice (NCCL calls it once per load)");
    }
    return commonInit(log, prof, 1);
}
static int props10(int dev, struct props* p) { return fillProperties(dev, p, 0); }
static int listen10(int dev, void* handle, void** listenComm) { return listenCommon(dev, handle, listenComm); }
static int connect10(int dev, void* config, void* handle, void** sendComm, void** devComm) {
    (void) devComm;
    if (config == NULL) {
        return violation("a v10 connect without a config");
    }
    return connectCommon(dev, handle, sendComm);
}

/* ncclNet_v10_t, 20 slots (spec 3.7); iflush, getDeviceMr, irecvConsumed and makeVDevice NULL. */
EXPORT const struct {
    const char* name;
    void* fn[19];
} ncclNetPlugin_v10 = {
    "FaultyV10",
    {(void*) init10, (void*) devices, (void*) props10, (void*) listen10, (void*) connect10, (void*) accept_,
     (void*) regMr_, NULL, (void*) deregMr_, (void*) isend_, (void*) irecv_, NULL, (void*) test_, (void*) close_,
     (void*) close_, (void*) close_, NULL, NULL, NULL}};

#else

static int finalizeCalls;
static void* liveContexts[64];

static int init11(void** ctx, uint64_t commId, int* config, logger_fn log, profiler_fn prof) {
    (void) commId;
    if (ctx == NULL || config == NULL) {
        initCalls++;
        return violation("a v11 init without a ctx out-pointer or a config");
    }
    if (*config != -1) {
        initCalls++;
        return violation("a v11 init whose config has a traffic class NCCL would not pass");
    }
    int rc = commonInit(log, prof, 1);
    if (rc == OK) {
        *ctx = &liveContexts[initCalls % 64];
    }
    return rc;
}
static int props11(int dev, struct props* p) { return fillProperties(dev, p, 1); }
static int listen11(void* ctx, int dev, void* handle, void** listenComm) {
    if (ctx == NULL) {
        return violation("listen without the ctx of init");
    }
    return listenCommon(dev, handle, listenComm);
}
static int connect11(void* ctx, int dev, void* handle, void** sendComm, void** devComm) {
    (void) devComm;
    if (ctx == NULL) {
        return violation("connect without the ctx of init");
    }
    return connectCommon(dev, handle, sendComm);
}
static int finalize11(void* ctx) {
    finalizeCalls++;
    if (ctx == NULL) {
        return violation("finalize without the ctx of init");
    }
    if (initFailed) {
        return violation("finalize of a ctx whose init failed");
    }
    return OK;
}

/* ncclNet_v11_t, 22 slots (spec 3.8); regMrDmaBuf, iflush, getDeviceMr, irecvConsumed, makeVDevice
   and setNetAttr NULL, and finalize too where there are no devices. */
EXPORT const struct {
    const char* name;
    void* fn[21];
} ncclNetPlugin_v11 = {
    FAULT == FAULT_INIT_FAILS ? "FaultyInit" : FAULT == FAULT_NO_DEVICES ? "FaultyNoDevices"
        : FAULT == FAULT_CRASH ? "FaultyCrash" : "FaultyProps",
    {(void*) init11, (void*) devices, (void*) props11, (void*) listen11, (void*) connect11, (void*) accept_,
     (void*) regMr_, NULL, (void*) deregMr_, (void*) isend_, (void*) irecv_, NULL, (void*) test_, (void*) close_,
     (void*) close_, (void*) close_, NULL, NULL, NULL,
     FAULT == FAULT_NO_DEVICES ? NULL : (void*) finalize11, NULL}};

#endif
