/*
 * The ncclNet / ncclCollNet plugin ABI, versions 6 to 12, as NCCL defines it on LP64 Linux.
 *
 * Written from the layout tables of shared/spec/ncclnet-abi.md (sections 1 and 3); the static
 * assertions at the end pin every size and the offsets that moved between versions, so a typo here
 * fails the build instead of corrupting NCCL's memory.
 */
#ifndef JCCL_NCCLNET_H
#define JCCL_NCCLNET_H

#include <stddef.h>
#include <stdint.h>

typedef int ncclResult_t;
enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6
};

typedef int ncclDataType_t;
typedef int ncclRedOp_t;

/* ncclDebugLogLevel and the subsystem flags the shim uses. */
enum { NCCL_LOG_NONE = 0, NCCL_LOG_VERSION = 1, NCCL_LOG_WARN = 2, NCCL_LOG_INFO = 3, NCCL_LOG_ABORT = 4,
       NCCL_LOG_TRACE = 5 };
#define NCCL_INIT 0x1UL
#define NCCL_NET 0x10UL
#define NCCL_ALL (~0UL)

typedef void (*ncclDebugLogger_t)(int level, unsigned long flags, const char* file, int line, const char* fmt, ...);
typedef ncclResult_t (*ncclProfilerCallback_t)(void** eHandle, int type, void* pHandle, int64_t pluginId,
                                               void* extData);

#define NCCL_NET_HANDLE_MAXSIZE 128
#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4
#define NCCL_NET_DEVICE_HOST 0
#define NCCL_NET_DEVICE_INVALID_VERSION 0
#define NCCL_NET_MAX_DEVS_PER_NIC_V11 4
#define NCCL_NET_MAX_DEVS_PER_NIC_V12 8

typedef struct {
    int netDeviceType;
    int netDeviceVersion;
    void* handle;
    size_t size;
    int needsProxyProgress;
} ncclNetDeviceHandle_v7_t;

typedef struct { int ndevs; int devs[NCCL_NET_MAX_DEVS_PER_NIC_V11]; } ncclNetVDeviceProps_v9_t;
typedef struct { int ndevs; int devs[NCCL_NET_MAX_DEVS_PER_NIC_V12]; } ncclNetVDeviceProps_v12_t;

typedef struct { int trafficClass; } ncclNetCommConfig_v10_t;

typedef struct {
    int32_t maxConcurrentPeers;
    int32_t minConcurrentPeers;
    int32_t maxFlowsPerPeer;
    int32_t minFlowsPerPeer;
} ncclNetCommAttr_v11_t;

typedef struct {
    ncclNetCommAttr_v11_t sendCommAttr;
    ncclNetCommAttr_v11_t recvCommAttr;
    uint32_t op;
    uint32_t algo;
    uint32_t proto;
} ncclNetAttr_v11_t;

typedef struct { void* mhandle; void* address; uint32_t size; } ncclNetSGE_v8_t;
typedef struct { void* mhandle; void* address; size_t size; } ncclNetSGE_v9_t;

/* ---- properties ---------------------------------------------------------------------------- */

typedef struct {
    char* name;
    char* pciPath;
    uint64_t guid;
    int ptrSupport;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
} ncclNetProperties_v6_t;

typedef struct {
    char* name;
    char* pciPath;
    uint64_t guid;
    int ptrSupport;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    int netDeviceType;
    int netDeviceVersion;
} ncclNetProperties_v7_t;

typedef struct {
    char* name;
    char* pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    int netDeviceType;
    int netDeviceVersion;
} ncclNetProperties_v8_t;

typedef struct {
    char* name;
    char* pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int forceFlush;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    int netDeviceType;
    int netDeviceVersion;
    ncclNetVDeviceProps_v9_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
} ncclNetProperties_v9_t;

typedef ncclNetProperties_v9_t ncclNetProperties_v10_t;

typedef struct {
    char* name;
    char* pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int forceFlush;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    int netDeviceType;
    int netDeviceVersion;
    ncclNetVDeviceProps_v9_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
    int maxMultiRequestSize;
} ncclNetProperties_v11_t;

typedef struct {
    char* name;
    char* pciPath;
    uint64_t guid;
    int ptrSupport;
    int regIsGlobal;
    int forceFlush;
    int speed;
    int port;
    float latency;
    int maxComms;
    int maxRecvs;
    int netDeviceType;
    int netDeviceVersion;
    ncclNetVDeviceProps_v12_t vProps;
    size_t maxP2pBytes;
    size_t maxCollBytes;
    int maxMultiRequestSize;
    int16_t railId;
    int16_t planeId;
} ncclNetProperties_v12_t;

/* ---- ncclNet function tables --------------------------------------------------------------- */

typedef struct {
    const char* name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int* ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t* props);
    ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
    ncclResult_t (*connect)(int dev, void* handle, void** sendComm);
    ncclResult_t (*accept)(void* listenComm, void** recvComm);
    ncclResult_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
    ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
    ncclResult_t (*deregMr)(void* comm, void* mhandle);
    ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle, void** request);
    ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles, void** request);
    ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
    ncclResult_t (*test)(void* request, int* done, int* sizes);
    ncclResult_t (*closeSend)(void* sendComm);
    ncclResult_t (*closeRecv)(void* recvComm);
    ncclResult_t (*closeListen)(void* listenComm);
} ncclNet_v6_t;

typedef struct {
    const char* name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int* ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v7_t* props);
    ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
    ncclResult_t (*connect)(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** sendDevComm);
    ncclResult_t (*accept)(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm);
    ncclResult_t (*regMr)(void* comm, void* data, int size, int type, void** mhandle);
    ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
    ncclResult_t (*deregMr)(void* comm, void* mhandle);
    ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle, void** request);
    ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles, void** request);
    ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
    ncclResult_t (*test)(void* request, int* done, int* sizes);
    ncclResult_t (*closeSend)(void* sendComm);
    ncclResult_t (*closeRecv)(void* recvComm);
    ncclResult_t (*closeListen)(void* listenComm);
    ncclResult_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void* recvComm, int n, void* request);
} ncclNet_v7_t;

typedef struct {
    const char* name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int* ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t* props);
    ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
    ncclResult_t (*connect)(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** sendDevComm);
    ncclResult_t (*accept)(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm);
    ncclResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
    ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
    ncclResult_t (*deregMr)(void* comm, void* mhandle);
    ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle, void** request);
    ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles, void** request);
    ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
    ncclResult_t (*test)(void* request, int* done, int* sizes);
    ncclResult_t (*closeSend)(void* sendComm);
    ncclResult_t (*closeRecv)(void* recvComm);
    ncclResult_t (*closeListen)(void* listenComm);
    ncclResult_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void* recvComm, int n, void* request);
} ncclNet_v8_t;

typedef struct {
    const char* name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int* ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v9_t* props);
    ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
    ncclResult_t (*connect)(int dev, void* handle, void** sendComm, ncclNetDeviceHandle_v7_t** sendDevComm);
    ncclResult_t (*accept)(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm);
    ncclResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
    ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
    ncclResult_t (*deregMr)(void* comm, void* mhandle);
    ncclResult_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle, void** request);
    ncclResult_t (*irecv)(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                          void** request);
    ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
    ncclResult_t (*test)(void* request, int* done, int* sizes);
    ncclResult_t (*closeSend)(void* sendComm);
    ncclResult_t (*closeRecv)(void* recvComm);
    ncclResult_t (*closeListen)(void* listenComm);
    ncclResult_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void* recvComm, int n, void* request);
    ncclResult_t (*makeVDevice)(int* d, ncclNetVDeviceProps_v9_t* props);
} ncclNet_v9_t;

typedef struct {
    const char* name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);
    ncclResult_t (*devices)(int* ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v10_t* props);
    ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
    ncclResult_t (*connect)(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** sendComm,
                            ncclNetDeviceHandle_v7_t** sendDevComm);
    ncclResult_t (*accept)(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm);
    ncclResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
    ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, void** mhandle);
    ncclResult_t (*deregMr)(void* comm, void* mhandle);
    ncclResult_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle, void* phandle,
                          void** request);
    ncclResult_t (*irecv)(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles,
                          void** phandles, void** request);
    ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles, void** request);
    ncclResult_t (*test)(void* request, int* done, int* sizes);
    ncclResult_t (*closeSend)(void* sendComm);
    ncclResult_t (*closeRecv)(void* recvComm);
    ncclResult_t (*closeListen)(void* listenComm);
    ncclResult_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
    ncclResult_t (*irecvConsumed)(void* recvComm, int n, void* request);
    ncclResult_t (*makeVDevice)(int* d, ncclNetVDeviceProps_v9_t* props);
} ncclNet_v10_t;

/* v11 and v12 share the function table; only the properties and vProps types differ. */
#define JCCL_NET_V11_TABLE(PROPS, VPROPS)                                                                    \
    struct {                                                                                                \
        const char* name;                                                                                   \
        ncclResult_t (*init)(void** ctx, uint64_t commId, ncclNetCommConfig_v10_t* config,                  \
                             ncclDebugLogger_t logFunction, ncclProfilerCallback_t profFunction);           \
        ncclResult_t (*devices)(int* ndev);                                                                 \
        ncclResult_t (*getProperties)(int dev, PROPS* props);                                               \
        ncclResult_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);                        \
        ncclResult_t (*connect)(void* ctx, int dev, void* handle, void** sendComm,                          \
                                ncclNetDeviceHandle_v7_t** sendDevComm);                                    \
        ncclResult_t (*accept)(void* listenComm, void** recvComm, ncclNetDeviceHandle_v7_t** recvDevComm);  \
        ncclResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);               \
        ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset, int fd, \
                                    void** mhandle);                                                        \
        ncclResult_t (*deregMr)(void* comm, void* mhandle);                                                 \
        ncclResult_t (*isend)(void* sendComm, void* data, size_t size, int tag, void* mhandle,              \
                              void* phandle, void** request);                                               \
        ncclResult_t (*irecv)(void* recvComm, int n, void** data, size_t* sizes, int* tags, void** mhandles, \
                              void** phandles, void** request);                                             \
        ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,             \
                               void** request);                                                             \
        ncclResult_t (*test)(void* request, int* done, int* sizes);                                         \
        ncclResult_t (*closeSend)(void* sendComm);                                                          \
        ncclResult_t (*closeRecv)(void* recvComm);                                                          \
        ncclResult_t (*closeListen)(void* listenComm);                                                      \
        ncclResult_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);                        \
        ncclResult_t (*irecvConsumed)(void* recvComm, int n, void* request);                                \
        ncclResult_t (*makeVDevice)(int* d, VPROPS* props);                                                 \
        ncclResult_t (*finalize)(void* ctx);                                                                \
        ncclResult_t (*setNetAttr)(void* ctx, ncclNetAttr_v11_t* netAttr);                                  \
    }

typedef JCCL_NET_V11_TABLE(ncclNetProperties_v11_t, ncclNetVDeviceProps_v9_t) ncclNet_v11_t;
typedef JCCL_NET_V11_TABLE(ncclNetProperties_v12_t, ncclNetVDeviceProps_v12_t) ncclNet_v12_t;

/* ---- ncclCollNet function tables ----------------------------------------------------------- */

#define JCCL_COLLNET_V6_TABLE(PROPS)                                                                        \
    struct {                                                                                                \
        const char* name;                                                                                   \
        ncclResult_t (*init)(ncclDebugLogger_t logFunction);                                                \
        ncclResult_t (*devices)(int* ndev);                                                                 \
        ncclResult_t (*getProperties)(int dev, PROPS* props);                                               \
        ncclResult_t (*listen)(int dev, void* handle, void** listenComm);                                   \
        ncclResult_t (*connect)(void* handles[], int nranks, int rank, void* listenComm, void** collComm);  \
        ncclResult_t (*reduceSupport)(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);          \
        ncclResult_t (*regMr)(void* collComm, void* data, int size, int type, void** mhandle);              \
        ncclResult_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,     \
                                    int fd, void** mhandle);                                                \
        ncclResult_t (*deregMr)(void* collComm, void* mhandle);                                             \
        ncclResult_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count,               \
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,           \
                                   void* recvMhandle, void** request);                                      \
        ncclResult_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);        \
        ncclResult_t (*test)(void* request, int* done, int* size);                                          \
        ncclResult_t (*closeColl)(void* collComm);                                                          \
        ncclResult_t (*closeListen)(void* listenComm);                                                      \
    }

typedef JCCL_COLLNET_V6_TABLE(ncclNetProperties_v6_t) ncclCollNet_v6_t;
typedef JCCL_COLLNET_V6_TABLE(ncclNetProperties_v7_t) ncclCollNet_v7_t;

typedef struct {
    const char* name;
    ncclResult_t (*init)(ncclDebugLogger_t logFunction);
    ncclResult_t (*devices)(int* ndev);
    ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t* props);
    ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
    ncclResult_t (*connect)(void* handles[], int nranks, int rank, void* listenComm, void** collComm);
    ncclResult_t (*reduceSupport)(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);
    ncclResult_t (*regMr)(void* collComm, void* data, size_t size, int type, void** mhandle);
    ncclResult_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset, int fd,
                                void** mhandle);
    ncclResult_t (*deregMr)(void* collComm, void* mhandle);
    ncclResult_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count, ncclDataType_t dataType,
                               ncclRedOp_t redOp, void* sendMhandle, void* recvMhandle, void** request);
    ncclResult_t (*iallgather)(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v8_t* recvParts,
                               size_t bytesPerRank, size_t windowOffset, size_t windowBytes, void* sendMhandle,
                               void** request);
    ncclResult_t (*ireducescatter)(void* collComm, int nSendParts, ncclNetSGE_v8_t* sendParts, void* recvData,
                                   size_t bytesPerRank, size_t windowOffset, size_t windowBytes,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void* recvMhandle, void** request);
    ncclResult_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
    ncclResult_t (*test)(void* request, int* done, int* size);
    ncclResult_t (*closeColl)(void* collComm);
    ncclResult_t (*closeListen)(void* listenComm);
} ncclCollNet_v8_t;

/* v9 and v10 share the table (v10 only changed the properties type name). */
#define JCCL_COLLNET_V9_TABLE(PROPS)                                                                        \
    struct {                                                                                                \
        const char* name;                                                                                   \
        ncclResult_t (*init)(ncclDebugLogger_t logFunction);                                                \
        ncclResult_t (*devices)(int* ndev);                                                                 \
        ncclResult_t (*getProperties)(int dev, PROPS* props);                                               \
        ncclResult_t (*listen)(int dev, void* handle, void** listenComm);                                   \
        ncclResult_t (*connect)(void* handles[], int nranks, int rank, void* listenComm, void** collComm);  \
        ncclResult_t (*reduceSupport)(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);          \
        ncclResult_t (*regMr)(void* collComm, void* data, size_t size, int type, void** mhandle);           \
        ncclResult_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,     \
                                    int fd, void** mhandle);                                                \
        ncclResult_t (*deregMr)(void* collComm, void* mhandle);                                             \
        ncclResult_t (*iallreduce)(void* collComm, void* sendData, void* recvData, size_t count,            \
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,           \
                                   void* recvMhandle, void** request);                                      \
        ncclResult_t (*iallgather)(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v9_t* recvParts, \
                                   size_t bytesPerRank, size_t windowOffset, size_t windowBytes,            \
                                   void* sendMhandle, void** request);                                      \
        ncclResult_t (*ireducescatter)(void* collComm, int nSendParts, ncclNetSGE_v9_t* sendParts,          \
                                       void* recvData, size_t bytesPerRank, size_t windowOffset,            \
                                       size_t windowBytes, ncclDataType_t dataType, ncclRedOp_t redOp,      \
                                       void* recvMhandle, void** request);                                  \
        ncclResult_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);        \
        ncclResult_t (*test)(void* request, int* done, int* size);                                          \
        ncclResult_t (*closeColl)(void* collComm);                                                          \
        ncclResult_t (*closeListen)(void* listenComm);                                                      \
        ncclResult_t (*makeVDevice)(int* d, ncclNetVDeviceProps_v9_t* props);                               \
    }

typedef JCCL_COLLNET_V9_TABLE(ncclNetProperties_v9_t) ncclCollNet_v9_t;
typedef JCCL_COLLNET_V9_TABLE(ncclNetProperties_v10_t) ncclCollNet_v10_t;

#define JCCL_COLLNET_V11_TABLE(PROPS, VPROPS)                                                               \
    struct {                                                                                                \
        const char* name;                                                                                   \
        ncclResult_t (*init)(void** ctx, uint64_t commId, ncclDebugLogger_t logFunction);                   \
        ncclResult_t (*devices)(int* ndev);                                                                 \
        ncclResult_t (*getProperties)(int dev, PROPS* props);                                               \
        ncclResult_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);                        \
        ncclResult_t (*connect)(void* handles[], int nranks, int rank, void* listenComm, void** collComm);  \
        ncclResult_t (*reduceSupport)(ncclDataType_t dataType, ncclRedOp_t redOp, int* supported);          \
        ncclResult_t (*regMr)(void* collComm, void* data, size_t size, int type, void** mhandle);           \
        ncclResult_t (*regMrDmaBuf)(void* collComm, void* data, size_t size, int type, uint64_t offset,     \
                                    int fd, void** mhandle);                                                \
        ncclResult_t (*deregMr)(void* collComm, void* mhandle);                                             \
        ncclResult_t (*iallreduce)(void* collComm, void* sendData, void* recvData, size_t count,            \
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void* sendMhandle,           \
                                   void* recvMhandle, void** request);                                      \
        ncclResult_t (*iallgather)(void* collComm, void* sendData, int nRecvParts, ncclNetSGE_v9_t* recvParts, \
                                   size_t bytesPerRank, size_t windowOffset, size_t windowBytes,            \
                                   void* sendMhandle, void** request);                                      \
        ncclResult_t (*ireducescatter)(void* collComm, int nSendParts, ncclNetSGE_v9_t* sendParts,          \
                                       void* recvData, size_t bytesPerRank, size_t windowOffset,            \
                                       size_t windowBytes, ncclDataType_t dataType, ncclRedOp_t redOp,      \
                                       void* recvMhandle, void** request);                                  \
        ncclResult_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);        \
        ncclResult_t (*test)(void* request, int* done, int* size);                                          \
        ncclResult_t (*closeColl)(void* collComm);                                                          \
        ncclResult_t (*closeListen)(void* listenComm);                                                      \
        ncclResult_t (*makeVDevice)(int* d, VPROPS* props);                                                 \
        ncclResult_t (*finalize)(void* ctx);                                                                \
    }

typedef JCCL_COLLNET_V11_TABLE(ncclNetProperties_v11_t, ncclNetVDeviceProps_v9_t) ncclCollNet_v11_t;
typedef JCCL_COLLNET_V11_TABLE(ncclNetProperties_v12_t, ncclNetVDeviceProps_v12_t) ncclCollNet_v12_t;

/* ---- the layout facts of spec 3.10, checked ------------------------------------------------ */

#define JCCL_SLOTS(T) (sizeof(T) / sizeof(void*))
_Static_assert(sizeof(ncclNetProperties_v6_t) == 48, "props v6");
_Static_assert(sizeof(ncclNetProperties_v7_t) == 56, "props v7");
_Static_assert(sizeof(ncclNetProperties_v8_t) == 64, "props v8");
_Static_assert(sizeof(ncclNetProperties_v9_t) == 104, "props v9");
_Static_assert(sizeof(ncclNetProperties_v11_t) == 112, "props v11");
_Static_assert(sizeof(ncclNetProperties_v12_t) == 128, "props v12");
_Static_assert(offsetof(ncclNetProperties_v8_t, speed) == 32, "v8 inserted regIsGlobal");
_Static_assert(offsetof(ncclNetProperties_v9_t, vProps) == 64, "v9 vProps");
_Static_assert(offsetof(ncclNetProperties_v9_t, maxP2pBytes) == 88, "v9 maxP2pBytes");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize) == 104, "v11 maxMultiRequestSize");
_Static_assert(offsetof(ncclNetProperties_v12_t, maxP2pBytes) == 104, "v12 maxP2pBytes");
_Static_assert(offsetof(ncclNetProperties_v12_t, railId) == 124, "v12 railId");
_Static_assert(sizeof(ncclNetDeviceHandle_v7_t) == 32, "device handle");
_Static_assert(sizeof(ncclNetSGE_v8_t) == 24 && sizeof(ncclNetSGE_v9_t) == 24, "SGE");
_Static_assert(sizeof(ncclNetAttr_v11_t) == 44, "net attr");
_Static_assert(JCCL_SLOTS(ncclNet_v6_t) == 17 && JCCL_SLOTS(ncclNet_v7_t) == 19 && JCCL_SLOTS(ncclNet_v8_t) == 19,
               "net slots v6-v8");
_Static_assert(JCCL_SLOTS(ncclNet_v9_t) == 20 && JCCL_SLOTS(ncclNet_v10_t) == 20, "net slots v9-v10");
_Static_assert(JCCL_SLOTS(ncclNet_v11_t) == 22 && JCCL_SLOTS(ncclNet_v12_t) == 22, "net slots v11-v12");
_Static_assert(JCCL_SLOTS(ncclCollNet_v6_t) == 15 && JCCL_SLOTS(ncclCollNet_v7_t) == 15, "collnet slots v6-v7");
_Static_assert(JCCL_SLOTS(ncclCollNet_v8_t) == 17, "collnet slots v8");
_Static_assert(JCCL_SLOTS(ncclCollNet_v9_t) == 18 && JCCL_SLOTS(ncclCollNet_v10_t) == 18, "collnet slots v9-v10");
_Static_assert(JCCL_SLOTS(ncclCollNet_v11_t) == 19 && JCCL_SLOTS(ncclCollNet_v12_t) == 19, "collnet slots v11-v12");

#endif
