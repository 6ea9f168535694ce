package io.jccl.net.ib;

import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One entry of the clear-to-send FIFO (NCCL's {@code ncclIbSendFifo}, spec 8.3): the receiver
 * describes a posted buffer in it and RDMA-writes it into the sender's FIFO; the sender reads it
 * to know where to write.
 *
 * <p>The FIFO has {@link IbComm#SLOTS} slots of {@link IbDevice#MAX_RECVS} entries, one slot per
 * (grouped) receive; receive number {@code seq} uses slot {@code seq % SLOTS} and stamps
 * {@code seq + 1} into its entries. The stamp is written at both ends of the 64-byte entry: an
 * RDMA write lands in memory in no guaranteed order, and an entry whose two stamps agree has been
 * written whole, whichever end the adapter wrote first. (NCCL relies on 32-byte alignment alone.)
 */
final class CtsFifo {
    static final StructLayout LAYOUT = structLayout(
            JAVA_LONG.withName("idx"),
            JAVA_LONG.withName("addr"),
            JAVA_LONG.withName("size"),
            JAVA_INT.withName("rkey"),
            JAVA_INT.withName("tag"),
            JAVA_INT.withName("nreqs"),
            paddingLayout(20),
            JAVA_LONG.withName("idx_check"))
            .withName("jccl_ib_cts_entry");

    static final long ENTRY = LAYOUT.byteSize();
    static final long IDX = offset("idx");
    static final long ADDR = offset("addr");
    static final long SIZE = offset("size");
    static final long RKEY = offset("rkey");
    static final long TAG = offset("tag");
    static final long NREQS = offset("nreqs");
    static final long IDX_CHECK = offset("idx_check");

    private CtsFifo() {
    }

    private static long offset(String name) {
        return LAYOUT.byteOffset(PathElement.groupElement(name));
    }
}
