package io.jccl.shim;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The structures shared with the shim's C half ({@code src/main/c/jccl_shim.h}): the services the C
 * half hands over at bootstrap, the canonical properties struct, and the order of the operation
 * tables the Java half fills with upcall stubs. Every pointer crosses as a {@code long} (LP64), so
 * that upcalls receive plain values and allocate nothing.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
final class ShimAbi {
    private ShimAbi() {
    }

    /** {@code JCCL_SHIM_ABI} of {@code jccl_shim.h}: both halves must agree. */
    static final int VERSION = 1;

    /** All of memory, to read and write through the addresses NCCL passes. */
    static final MemorySegment MEMORY = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    static final ValueLayout.OfLong LONG = JAVA_LONG.withByteAlignment(1);
    static final ValueLayout.OfInt INT = JAVA_INT.withByteAlignment(1);
    static final AddressLayout C_POINTER = ValueLayout.ADDRESS;

    /** {@code jccl_services}. */
    static final StructLayout SERVICES = MemoryLayout.structLayout(
            JAVA_INT.withName("abiVersion"),
            JAVA_INT.withName("netOpCount"),
            JAVA_INT.withName("collNetOpCount"),
            JAVA_INT.withName("maxApiVersion"),
            JAVA_LONG.withName("netName"),
            JAVA_LONG.withName("collNetName"),
            JAVA_LONG.withName("libraryPath"),
            JAVA_LONG.withName("log"),
            JAVA_LONG.withName("netOps"),
            JAVA_LONG.withName("collNetOps"));

    /** {@code jccl_props}. */
    static final StructLayout PROPS = MemoryLayout.structLayout(
            JAVA_LONG.withName("name"),
            JAVA_LONG.withName("pciPath"),
            JAVA_LONG.withName("guid"),
            JAVA_INT.withName("ptrSupport"),
            JAVA_INT.withName("regIsGlobal"),
            JAVA_INT.withName("forceFlush"),
            JAVA_INT.withName("speed"),
            JAVA_INT.withName("port"),
            JAVA_FLOAT.withName("latency"),
            JAVA_INT.withName("maxComms"),
            JAVA_INT.withName("maxRecvs"),
            JAVA_LONG.withName("maxP2pBytes"),
            JAVA_LONG.withName("maxCollBytes"));

    static long offset(StructLayout layout, String field) {
        return layout.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    /** {@code void (*log)(int32_t level, uint64_t flags, const char* message)} of the services. */
    static final FunctionDescriptor LOG = FunctionDescriptor.ofVoid(JAVA_INT, JAVA_LONG, C_POINTER);

    private static final ValueLayout L = JAVA_LONG;
    private static final ValueLayout I = JAVA_INT;

    /** {@code jccl_net_ops}, in order: each entry's upcall target on {@link NetBridge} and C signature. */
    enum NetOp {
        INIT(I, L, L, I, I),
        DEVICES(I, L),
        GET_PROPERTIES(I, I, L),
        LISTEN(I, L, I, L, L),
        CONNECT(I, L, I, L, L),
        ACCEPT(I, L, L),
        REG_MR(I, L, L, L, I, L),
        REG_MR_DMA_BUF(I, L, L, L, I, L, I, L),
        DEREG_MR(I, L, L),
        ISEND(I, L, L, L, I, L, L),
        IRECV(I, L, I, L, L, L, L, L),
        IFLUSH(I, L, I, L, L, L, L),
        TEST(I, L, L, L),
        CLOSE_SEND(I, L),
        CLOSE_RECV(I, L),
        CLOSE_LISTEN(I, L),
        FINALIZE_CONTEXT(I, L);

        final FunctionDescriptor descriptor;

        NetOp(ValueLayout result, ValueLayout... args) {
            this.descriptor = FunctionDescriptor.of(result, args);
        }
    }

    /** {@code jccl_collnet_ops}, in order: each entry's upcall target on {@link CollNetBridge} and C signature. */
    enum CollNetOp {
        INIT(I, L, L, I),
        DEVICES(I, L),
        GET_PROPERTIES(I, I, L),
        LISTEN(I, L, I, L, L),
        CONNECT(I, L, I, I, L, L),
        REDUCE_SUPPORT(I, I, I, L),
        REG_MR(I, L, L, L, I, L),
        REG_MR_DMA_BUF(I, L, L, L, I, L, I, L),
        DEREG_MR(I, L, L),
        IALLREDUCE(I, L, L, L, L, I, I, L, L, L),
        IFLUSH(I, L, L, I, L, L),
        TEST(I, L, L, L),
        CLOSE_COLL(I, L),
        CLOSE_LISTEN(I, L),
        FINALIZE_CONTEXT(I, L);

        final FunctionDescriptor descriptor;

        CollNetOp(ValueLayout result, ValueLayout... args) {
            this.descriptor = FunctionDescriptor.of(result, args);
        }
    }

    /** @return the C string at {@code address}, or {@code null} for NULL */
    static String string(long address) {
        return address == 0 ? null : MEMORY.getString(address);
    }
}
