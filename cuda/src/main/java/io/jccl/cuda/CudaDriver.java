package io.jccl.cuda;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The CUDA driver API functions JCCL calls, bound once when this class initialises. The names are
 * the versioned symbols {@code cuda.h} maps its macros to ({@code cuMemAlloc} is
 * {@code cuMemAlloc_v2}); {@code CUdeviceptr} is a 64-bit integer, handles are pointers, every
 * function returns a {@code CUresult} (0 is success).
 */
@SuppressWarnings("restricted") // the binding: each descriptor is checked against cuda.h
final class CudaDriver {
    private static final String[] LIBRARY_NAMES = {"libcuda.so.1", "libcuda.so"};
    private static final Linker LINKER = Linker.nativeLinker();

    // CUresult values JCCL looks at
    static final int CUDA_SUCCESS = 0;
    static final int CUDA_ERROR_INVALID_VALUE = 1;
    static final int CUDA_ERROR_NO_DEVICE = 100;
    static final int CUDA_ERROR_INVALID_CONTEXT = 201;
    static final int CUDA_ERROR_NOT_READY = 600;
    static final int CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704;

    // CUdevice_attribute
    static final int ATTRIBUTE_PCI_BUS_ID = 33;
    static final int ATTRIBUTE_PCI_DEVICE_ID = 34;
    static final int ATTRIBUTE_UNIFIED_ADDRESSING = 41;
    static final int ATTRIBUTE_PCI_DOMAIN_ID = 50;
    static final int ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
    static final int ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;

    // CUpointer_attribute and CUmemorytype
    static final int POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
    static final int POINTER_ATTRIBUTE_IS_MANAGED = 8;
    static final int POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
    static final int MEMORYTYPE_HOST = 1;
    static final int MEMORYTYPE_DEVICE = 2;
    static final int MEMORYTYPE_UNIFIED = 4;

    static final int STREAM_NON_BLOCKING = 1;
    static final int EVENT_DISABLE_TIMING = 2;

    static final Throwable LOAD_FAILURE;
    static final String LIBRARY;

    static final MethodHandle INIT;
    static final MethodHandle DRIVER_GET_VERSION;
    static final MethodHandle DEVICE_GET_COUNT;
    static final MethodHandle DEVICE_GET;
    static final MethodHandle DEVICE_GET_NAME;
    static final MethodHandle DEVICE_TOTAL_MEM;
    static final MethodHandle DEVICE_GET_ATTRIBUTE;
    static final MethodHandle PRIMARY_CTX_RETAIN;
    static final MethodHandle PRIMARY_CTX_RELEASE;
    static final MethodHandle CTX_PUSH_CURRENT;
    static final MethodHandle CTX_POP_CURRENT;
    static final MethodHandle MEM_ALLOC;
    static final MethodHandle MEM_FREE;
    static final MethodHandle MEM_ALLOC_HOST;
    static final MethodHandle MEM_FREE_HOST;
    static final MethodHandle MEMCPY;
    static final MethodHandle MEMCPY_ASYNC;
    static final MethodHandle MEMSET_D8;
    static final MethodHandle MEMSET_D8_ASYNC;
    static final MethodHandle POINTER_GET_ATTRIBUTE;
    static final MethodHandle STREAM_CREATE;
    static final MethodHandle STREAM_DESTROY;
    static final MethodHandle STREAM_SYNCHRONIZE;
    static final MethodHandle STREAM_QUERY;
    static final MethodHandle EVENT_CREATE;
    static final MethodHandle EVENT_RECORD;
    static final MethodHandle EVENT_QUERY;
    static final MethodHandle EVENT_SYNCHRONIZE;
    static final MethodHandle EVENT_DESTROY;
    static final MethodHandle GET_ERROR_NAME;
    static final MethodHandle GET_ERROR_STRING;
    static final MethodHandle CTX_GET_CURRENT;
    static final MethodHandle MODULE_LOAD_DATA;
    static final MethodHandle MODULE_GET_FUNCTION;
    static final MethodHandle MODULE_UNLOAD;
    static final MethodHandle LAUNCH_KERNEL;
    static final MethodHandle STREAM_WRITE_VALUE32;
    static final MethodHandle STREAM_WAIT_VALUE32;
    static final MethodHandle IPC_GET_MEM_HANDLE;
    static final MethodHandle IPC_OPEN_MEM_HANDLE;
    static final MethodHandle IPC_CLOSE_MEM_HANDLE;
    static final MethodHandle DEVICE_CAN_ACCESS_PEER;
    static final MethodHandle CTX_ENABLE_PEER_ACCESS;

    /** {@code CUipcMemHandle}: 64 opaque bytes, passed by value to {@code cuIpcOpenMemHandle}. */
    static final int IPC_HANDLE_BYTES = 64;
    static final MemoryLayout IPC_HANDLE = MemoryLayout.structLayout(MemoryLayout.sequenceLayout(IPC_HANDLE_BYTES, JAVA_BYTE));
    /** {@code CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS}: the mapping enables peer access to its GPU. */
    static final int IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 1;

    /** {@code CU_STREAM_WAIT_VALUE_GEQ}: wait until {@code (int32_t)(*addr - value) >= 0}, a cyclic comparison. */
    static final int STREAM_WAIT_VALUE_GEQ = 0;
    static final int STREAM_WRITE_VALUE_DEFAULT = 0;

    static {
        MethodHandle[] h = new MethodHandle[43];
        Throwable failure = null;
        String library = null;
        try {
            List<String> tried = new ArrayList<>();
            SymbolLookup cuda = null;
            for (String name : LIBRARY_NAMES) {
                try {
                    cuda = SymbolLookup.libraryLookup(name, Arena.global());
                    library = name;
                    break;
                } catch (IllegalArgumentException e) {
                    tried.add(name);
                }
            }
            if (cuda == null) {
                throw new UnsatisfiedLinkError("CUDA's driver library is not installed (tried " + String.join(", ", tried)
                        + " on the dynamic linker's path): this machine has no NVIDIA driver");
            }
            FunctionDescriptor i = FunctionDescriptor.of(JAVA_INT, JAVA_INT);
            FunctionDescriptor a = FunctionDescriptor.of(JAVA_INT, ADDRESS);
            FunctionDescriptor aa = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
            FunctionDescriptor ai = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
            FunctionDescriptor l = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
            h[0] = down(cuda, "cuInit", i);
            h[1] = down(cuda, "cuDriverGetVersion", a);
            h[2] = down(cuda, "cuDeviceGetCount", a);
            h[3] = down(cuda, "cuDeviceGet", ai);
            h[4] = down(cuda, "cuDeviceGetName", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
            h[5] = down(cuda, "cuDeviceTotalMem_v2", ai);
            h[6] = down(cuda, "cuDeviceGetAttribute", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
            h[7] = down(cuda, "cuDevicePrimaryCtxRetain", ai);
            h[8] = down(cuda, "cuDevicePrimaryCtxRelease_v2", i);
            h[9] = down(cuda, "cuCtxPushCurrent_v2", a);
            h[10] = down(cuda, "cuCtxPopCurrent_v2", a);
            h[11] = down(cuda, "cuMemAlloc_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
            h[12] = down(cuda, "cuMemFree_v2", l);
            h[13] = down(cuda, "cuMemAllocHost_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
            h[14] = down(cuda, "cuMemFreeHost", a);
            h[15] = down(cuda, "cuMemcpy", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
            h[16] = down(cuda, "cuMemcpyAsync",
                    FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS));
            h[17] = down(cuda, "cuMemsetD8_v2", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_BYTE, JAVA_LONG));
            h[18] = down(cuda, "cuMemsetD8Async",
                    FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_BYTE, JAVA_LONG, ADDRESS));
            h[19] = down(cuda, "cuPointerGetAttribute", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG));
            h[20] = down(cuda, "cuStreamCreate", ai);
            h[21] = down(cuda, "cuStreamDestroy_v2", a);
            h[22] = down(cuda, "cuStreamSynchronize", a);
            h[23] = down(cuda, "cuStreamQuery", a);
            h[24] = down(cuda, "cuEventCreate", ai);
            h[25] = down(cuda, "cuEventRecord", aa);
            h[26] = down(cuda, "cuEventQuery", a);
            h[27] = down(cuda, "cuEventSynchronize", a);
            h[28] = down(cuda, "cuEventDestroy_v2", a);
            h[29] = down(cuda, "cuGetErrorName", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
            h[30] = down(cuda, "cuGetErrorString", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
            h[31] = down(cuda, "cuCtxGetCurrent", a);
            h[32] = down(cuda, "cuModuleLoadData", aa);
            h[33] = down(cuda, "cuModuleGetFunction", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
            h[34] = down(cuda, "cuModuleUnload", a);
            h[35] = down(cuda, "cuLaunchKernel", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT,
                    JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
            // Stream memory operations: cuda.h maps the names to the _v2 symbols since CUDA 11.7.
            FunctionDescriptor value32 = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_INT);
            h[36] = down(cuda, value32, "cuStreamWriteValue32_v2", "cuStreamWriteValue32");
            h[37] = down(cuda, value32, "cuStreamWaitValue32_v2", "cuStreamWaitValue32");
            // CUDA IPC and peer access: GPUs of one host writing into each other's memory.
            h[38] = down(cuda, "cuIpcGetMemHandle", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
            h[39] = down(cuda, FunctionDescriptor.of(JAVA_INT, ADDRESS, IPC_HANDLE, JAVA_INT), "cuIpcOpenMemHandle_v2",
                    "cuIpcOpenMemHandle");
            h[40] = down(cuda, "cuIpcCloseMemHandle", l);
            h[41] = down(cuda, "cuDeviceCanAccessPeer", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
            h[42] = down(cuda, "cuCtxEnablePeerAccess", ai);
        } catch (Throwable t) {
            failure = t;
        }
        LOAD_FAILURE = failure;
        LIBRARY = failure == null ? library : null;
        INIT = h[0];
        DRIVER_GET_VERSION = h[1];
        DEVICE_GET_COUNT = h[2];
        DEVICE_GET = h[3];
        DEVICE_GET_NAME = h[4];
        DEVICE_TOTAL_MEM = h[5];
        DEVICE_GET_ATTRIBUTE = h[6];
        PRIMARY_CTX_RETAIN = h[7];
        PRIMARY_CTX_RELEASE = h[8];
        CTX_PUSH_CURRENT = h[9];
        CTX_POP_CURRENT = h[10];
        MEM_ALLOC = h[11];
        MEM_FREE = h[12];
        MEM_ALLOC_HOST = h[13];
        MEM_FREE_HOST = h[14];
        MEMCPY = h[15];
        MEMCPY_ASYNC = h[16];
        MEMSET_D8 = h[17];
        MEMSET_D8_ASYNC = h[18];
        POINTER_GET_ATTRIBUTE = h[19];
        STREAM_CREATE = h[20];
        STREAM_DESTROY = h[21];
        STREAM_SYNCHRONIZE = h[22];
        STREAM_QUERY = h[23];
        EVENT_CREATE = h[24];
        EVENT_RECORD = h[25];
        EVENT_QUERY = h[26];
        EVENT_SYNCHRONIZE = h[27];
        EVENT_DESTROY = h[28];
        GET_ERROR_NAME = h[29];
        GET_ERROR_STRING = h[30];
        CTX_GET_CURRENT = h[31];
        MODULE_LOAD_DATA = h[32];
        MODULE_GET_FUNCTION = h[33];
        MODULE_UNLOAD = h[34];
        LAUNCH_KERNEL = h[35];
        STREAM_WRITE_VALUE32 = h[36];
        STREAM_WAIT_VALUE32 = h[37];
        IPC_GET_MEM_HANDLE = h[38];
        IPC_OPEN_MEM_HANDLE = h[39];
        IPC_CLOSE_MEM_HANDLE = h[40];
        DEVICE_CAN_ACCESS_PEER = h[41];
        CTX_ENABLE_PEER_ACCESS = h[42];
    }

    private CudaDriver() {
    }

    /** The first of {@code names} that libcuda has. */
    private static MethodHandle down(SymbolLookup lookup, FunctionDescriptor fd, String... names) {
        for (String name : names) {
            var symbol = lookup.find(name);
            if (symbol.isPresent()) {
                return LINKER.downcallHandle(symbol.get(), fd);
            }
        }
        throw new UnsatisfiedLinkError(String.join(" and ", names) + " not found in libcuda: the NVIDIA driver is "
                + "older than CUDA 11");
    }

    private static MethodHandle down(SymbolLookup lookup, String name, FunctionDescriptor fd) {
        MemorySegment symbol = lookup.find(name).orElseThrow(() -> new UnsatisfiedLinkError(name
                + " not found in libcuda: the NVIDIA driver is older than CUDA 11"));
        return LINKER.downcallHandle(symbol, fd);
    }

    /**
     * @param call   what was called, for the message
     * @param result its {@code CUresult}
     * @throws CudaException if {@code result} is not {@code CUDA_SUCCESS}
     */
    static void check(String call, int result) {
        if (result != CUDA_SUCCESS) {
            throw failure(call, result);
        }
    }

    static CudaException failure(String call, int result) {
        return new CudaException(call, result, describe(GET_ERROR_NAME, result, "CUresult " + result),
                describe(GET_ERROR_STRING, result, "no description"));
    }

    private static String describe(MethodHandle h, int result, String otherwise) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            if ((int) h.invokeExact(result, out) != CUDA_SUCCESS) {
                return otherwise;
            }
            return out.get(ADDRESS, 0).reinterpret(4096).getString(0);
        } catch (Throwable t) {
            return otherwise;
        }
    }

    /** Rethrows what a downcall threw: only errors of the binding itself, never a CUDA failure. */
    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            throw r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(t);
    }
}
