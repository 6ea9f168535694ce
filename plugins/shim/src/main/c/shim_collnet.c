/*
 * ncclCollNetPlugin_v6 ... ncclCollNetPlugin_v12: the CollNet adapters, calling the canonical
 * operations of jccl_collnet. With no Java CollNet transport configured (JCCL_SHIM_COLLNET unset)
 * the Java half reports 0 devices, which NCCL reads as "no CollNet" without failing.
 *
 * iallgather / ireducescatter (v8+) stay NULL: the Java SPI is the v6 contract, which has neither,
 * and NULL is what NCCL's own compat layer gives v6 and v7 plugins.
 */
#include <stdio.h>
#include <string.h>

#include "jccl_shim.h"

/*
 * v11+ init hands NCCL a context, and NCCL 2.28/2.29's ncclNetFinalize calls
 * `if (comm->collNetContext) comm->ncclCollNet->finalize(...)` at every communicator's destroy.
 * But NCCL sets comm->ncclCollNet only when the CollNet reported devices, so a context handed out
 * by a CollNet with 0 devices (no JCCL_SHIM_COLLNET, the usual case) is finalized through a NULL
 * table: SIGSEGV at address 0x90, finalize's offset in ncclCollNet_v11_t, inside ncclCommDestroy.
 * So a CollNet without devices finalizes its own context and leaves none.
 */
static ncclResult_t init_common(int version, void** ctx, uint64_t commId, ncclDebugLogger_t log) {
    jccl_set_logger(log);
    char what[32];
    snprintf(what, sizeof what, "ncclCollNet v%d init", version);
    ncclResult_t r = jccl_java_ready(what, version);
    if (r != ncclSuccess) {
        return r;
    }
    r = jccl_collnet.init(J(ctx), (int64_t) commId, version);
    if (r != ncclSuccess || ctx == NULL || *ctx == NULL) {
        return r;
    }
    int ndev = 0;
    if (jccl_collnet.devices(J(&ndev)) != ncclSuccess || ndev <= 0) {
        jccl_collnet.finalize(J(*ctx));
        *ctx = NULL;
    }
    return ncclSuccess;
}

static ncclResult_t init_v6(ncclDebugLogger_t log) {
    return init_common(6, NULL, 0, log);
}
static ncclResult_t init_v7(ncclDebugLogger_t log) {
    return init_common(7, NULL, 0, log);
}
static ncclResult_t init_v8(ncclDebugLogger_t log) {
    return init_common(8, NULL, 0, log);
}
static ncclResult_t init_v9(ncclDebugLogger_t log) {
    return init_common(9, NULL, 0, log);
}
static ncclResult_t init_v10(ncclDebugLogger_t log) {
    return init_common(10, NULL, 0, log);
}
static ncclResult_t init_v11(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
    return init_common(11, ctx, commId, log);
}
static ncclResult_t init_v12(void** ctx, uint64_t commId, ncclDebugLogger_t log) {
    return init_common(12, ctx, commId, log);
}

static ncclResult_t devices(int* ndev) {
    return jccl_collnet.devices(J(ndev));
}

static ncclResult_t props_of(int dev, jccl_props* p) {
    memset(p, 0, sizeof *p);
    return jccl_collnet.getProperties(dev, J(p));
}

#define COPY_V6_FIELDS(dst, p)                \
    do {                                      \
        (dst)->name = (char*) (p).name;       \
        (dst)->pciPath = (char*) (p).pciPath; \
        (dst)->guid = (p).guid;               \
        (dst)->ptrSupport = (p).ptrSupport;   \
        (dst)->speed = (p).speed;             \
        (dst)->port = (p).port;               \
        (dst)->latency = (p).latency;         \
        (dst)->maxComms = (p).maxComms;       \
        (dst)->maxRecvs = (p).maxRecvs;       \
    } while (0)

#define COPY_V9_FIELDS(dst, p, dev)                                \
    do {                                                           \
        (dst)->regIsGlobal = (p).regIsGlobal;                      \
        (dst)->forceFlush = (p).forceFlush;                        \
        (dst)->netDeviceType = NCCL_NET_DEVICE_HOST;               \
        (dst)->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION; \
        memset(&(dst)->vProps, 0, sizeof((dst)->vProps));          \
        (dst)->vProps.ndevs = 1;                                   \
        (dst)->vProps.devs[0] = (dev);                             \
        (dst)->maxP2pBytes = (p).maxP2pBytes;                      \
        (dst)->maxCollBytes = (p).maxCollBytes;                    \
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

static ncclResult_t listen_v6(int dev, void* handle, void** listenComm) {
    return jccl_collnet.listen(0, dev, J(handle), J(listenComm));
}

static ncclResult_t listen_v11(void* ctx, int dev, void* handle, void** listenComm) {
    return jccl_collnet.listen(J(ctx), dev, J(handle), J(listenComm));
}

static ncclResult_t connect(void* handles[], int nranks, int rank, void* listenComm, void** collComm) {
    return jccl_collnet.connect(J(handles), nranks, rank, J(listenComm), J(collComm));
}

static ncclResult_t reduceSupport(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported) {
    return jccl_collnet.reduceSupport(dataType, redOp, J(supported));
}

static ncclResult_t regMr_int(void* comm, void* data, int size, int type, void** mhandle) {
    return jccl_collnet.regMr(J(comm), J(data), size, type, J(mhandle));
}

static ncclResult_t regMr_size(void* comm, void* data, size_t size, int type, void** mhandle) {
    return jccl_collnet.regMr(J(comm), J(data), (int64_t) size, type, J(mhandle));
}

static ncclResult_t regMrDmaBuf(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle) {
    return jccl_collnet.regMrDmaBuf(J(comm), J(data), (int64_t) size, type, (int64_t) offset, fd, J(mhandle));
}

static ncclResult_t deregMr(void* comm, void* mhandle) {
    return jccl_collnet.deregMr(J(comm), J(mhandle));
}

static ncclResult_t iallreduce_int(void* comm, void* sendData, void* recvData, int count, ncclDataType_t dataType,
                                   ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle, void** request) {
    return jccl_collnet.iallreduce(J(comm), J(sendData), J(recvData), count, dataType, redOp, J(sendMhandle),
                                   J(recvMhandle), J(request));
}

static ncclResult_t iallreduce_size(void* comm, void* sendData, void* recvData, size_t count, ncclDataType_t dataType,
                                    ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle, void** request) {
    return jccl_collnet.iallreduce(J(comm), J(sendData), J(recvData), (int64_t) count, dataType, redOp,
                                   J(sendMhandle), J(recvMhandle), J(request));
}

static ncclResult_t iflush(void* comm, void* data, int size, void* mhandle, void** request) {
    return jccl_collnet.iflush(J(comm), J(data), size, J(mhandle), J(request));
}

static ncclResult_t test(void* request, int* done, int* size) {
    return jccl_collnet.test(J(request), J(done), J(size));
}

static ncclResult_t closeColl(void* comm) {
    return jccl_collnet.closeColl(J(comm));
}

static ncclResult_t closeListen(void* listenComm) {
    return jccl_collnet.closeListen(J(listenComm));
}

static ncclResult_t finalize(void* ctx) {
    return jccl_collnet.finalize(J(ctx));
}

static const ncclCollNet_v6_t collnet_v6 = {
    jccl_collnet_name, init_v6, devices, getProperties_v6, listen_v6, connect, reduceSupport, regMr_int, regMrDmaBuf,
    deregMr, iallreduce_int, iflush, test, closeColl, closeListen,
};

static const ncclCollNet_v7_t collnet_v7 = {
    jccl_collnet_name, init_v7, devices, getProperties_v7, listen_v6, connect, reduceSupport, regMr_int, regMrDmaBuf,
    deregMr, iallreduce_int, iflush, test, closeColl, closeListen,
};

static const ncclCollNet_v8_t collnet_v8 = {
    jccl_collnet_name, init_v8, devices, getProperties_v8, listen_v6, connect, reduceSupport, regMr_size, regMrDmaBuf,
    deregMr, iallreduce_int, NULL, NULL, iflush, test, closeColl, closeListen,
};

static const ncclCollNet_v9_t collnet_v9 = {
    jccl_collnet_name, init_v9, devices, getProperties_v9, listen_v6, connect, reduceSupport, regMr_size, regMrDmaBuf,
    deregMr, iallreduce_size, NULL, NULL, iflush, test, closeColl, closeListen, NULL,
};

static const ncclCollNet_v10_t collnet_v10 = {
    jccl_collnet_name, init_v10, devices, getProperties_v9, listen_v6, connect, reduceSupport, regMr_size,
    regMrDmaBuf, deregMr, iallreduce_size, NULL, NULL, iflush, test, closeColl, closeListen, NULL,
};

static const ncclCollNet_v11_t collnet_v11 = {
    jccl_collnet_name, init_v11, devices, getProperties_v11, listen_v11, connect, reduceSupport, regMr_size,
    regMrDmaBuf, deregMr, iallreduce_size, NULL, NULL, iflush, test, closeColl, closeListen, NULL, finalize,
};

static const ncclCollNet_v12_t collnet_v12 = {
    jccl_collnet_name, init_v12, devices, getProperties_v12, listen_v11, connect, reduceSupport, regMr_size,
    regMrDmaBuf, deregMr, iallreduce_size, NULL, NULL, iflush, test, closeColl, closeListen, NULL, finalize,
};

JCCL_EXPORT(ncclCollNetPlugin_v6, collnet_v6, 6)
JCCL_EXPORT(ncclCollNetPlugin_v7, collnet_v7, 7)
JCCL_EXPORT(ncclCollNetPlugin_v8, collnet_v8, 8)
JCCL_EXPORT(ncclCollNetPlugin_v9, collnet_v9, 9)
JCCL_EXPORT(ncclCollNetPlugin_v10, collnet_v10, 10)
JCCL_EXPORT(ncclCollNetPlugin_v11, collnet_v11, 11)
JCCL_EXPORT(ncclCollNetPlugin_v12, collnet_v12, 12)
