package io.jccl.core.collective;

import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * This rank's part in CollNet all-reduces. The first rank of each host (its head) holds the
 * CollNet comm with the other hosts' heads and a registered staging buffer; every other rank of
 * the host has a connection to its head and one back.
 *
 * @param plugin      the CollNet transport; on heads only
 * @param comm        the heads' CollNet comm; on heads only
 * @param stage       {@link io.jccl.core.transport.Connection#STEPS} chunks, registered; on heads only
 * @param stageHandle its registration
 * @param chunkBytes  bytes of one chunk: a stage slot, and one message between a rank and its head
 * @param nranks      ranks of the communicator (AVG divides by it)
 * @param supported   bit {@code type.code() * 4 + op.code()} set where every head's transport
 *                    reduces the pair (the same on every rank)
 * @param toHead      a member's connection to its head
 * @param fromHead    a member's connection from its head
 * @param toMembers   a head's connections to the other ranks of its host
 * @param fromMembers a head's connections from them, in the same order
 */
public record CollNetLinks(CollNetPlugin plugin, CollComm comm, MemorySegment stage, MemoryHandle stageHandle,
                           int chunkBytes, int nranks, long supported, SendConnection toHead, RecvConnection fromHead,
                           SendConnection[] toMembers, RecvConnection[] fromMembers) {

    /** @return whether this rank is its host's head */
    public boolean isHead() {
        return comm != null;
    }

    /** @return whether CollNet all-reduces {@code op} over {@code type} (AVG as a sum, then a division) */
    public boolean supports(DataType type, ReduceOp op) {
        return (supported & bit(type, op == ReduceOp.AVG ? ReduceOp.SUM : op)) != 0;
    }

    /** @return the bit of a pair in {@link #supported} */
    public static long bit(DataType type, ReduceOp op) {
        return 1L << (type.code() * 4 + op.code());
    }
}
