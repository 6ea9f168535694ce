package io.jccl.core.collective;

import io.jccl.core.JcclException;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.Connection;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.DataType;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * One all-reduce through CollNet, pipelined in chunks (NCCL's CollNetChain, with a host's ranks
 * gathered at its head):
 * <ul>
 *   <li>a member sends its chunks to its head and receives the results back;</li>
 *   <li>the head reduces its own chunk and its members' into a stage slot, all-reduces the slot
 *       with the other hosts' heads through the CollNet transport ({@code iallreduce}, up to
 *       {@link Connection#STEPS} chunks in flight), copies the result out and sends it to its
 *       members.</li>
 * </ul>
 * Proxy thread; allocates nothing per chunk.
 */
final class CollNetTask extends Task {
    private static final int WINDOW = Connection.STEPS;
    /** Smallest chunk worth a CollNet call of its own. */
    static final int MIN_CHUNK_BYTES = 32 << 10;

    private final CollNetLinks links;
    private final ReductionKernel kernel;
    private final DataType type;
    private final ReduceOp op;
    private final ReduceOp reduceOp;
    private final MemorySegment in;
    private final MemorySegment out;
    private final long base;
    private final long bytes;
    private final int chunk;
    private final long chunks;
    // Head.
    private final MemorySegment[] stageSlots;
    private final NetRequest[] requests;
    private final long[] downSent;
    private long gathered;
    private long posted;
    private long completed;
    private final int[] size = new int[1];
    // Member.
    private long upSent;
    private long downReceived;

    /**
     * @param base  offset in bytes of this task's share in {@code in} and {@code out}
     * @param bytes bytes of the share
     */
    CollNetTask(CollNetLinks links, ReductionKernel kernel, DataType type, ReduceOp op, MemorySegment in,
                MemorySegment out, long base, long bytes) {
        this.links = links;
        this.kernel = kernel;
        this.type = type;
        this.op = op;
        this.reduceOp = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        this.in = in;
        this.out = out;
        this.base = base;
        this.bytes = bytes;
        this.chunk = chunkBytes(bytes, links.chunkBytes(), type.size());
        this.chunks = (bytes + chunk - 1) / chunk;
        if (links.isHead()) {
            stageSlots = new MemorySegment[WINDOW];
            for (int s = 0; s < WINDOW; s++) {
                stageSlots[s] = links.stage().asSlice((long) s * links.chunkBytes(), links.chunkBytes());
            }
            requests = new NetRequest[WINDOW];
            downSent = new long[links.toMembers().length];
        } else {
            stageSlots = null;
            requests = null;
            downSent = null;
        }
    }

    /**
     * A call's chunk: a stage slot at most, and small enough that the call has {@link #WINDOW}
     * chunks when it can (a call of two chunks leaves the pipeline nearly empty: the aggregator
     * waits for every rank's whole first chunk before it reduces, and the ranks wait for its
     * result), but not below {@link #MIN_CHUNK_BYTES}; whole elements, 64-byte multiples.
     */
    static int chunkBytes(long bytes, int slotBytes, int elementBytes) {
        long want = Math.max(MIN_CHUNK_BYTES, (bytes + WINDOW - 1) / WINDOW);
        want = (want + 63) / 64 * 64;
        long chunk = Math.min(slotBytes, want);
        return (int) Math.max(elementBytes, chunk / elementBytes * elementBytes);
    }

    @Override
    void start() {
        if (links.isHead()) {
            for (RecvConnection c : links.fromMembers()) {
                c.expect(chunks);
            }
        } else {
            links.fromHead().expect(chunks);
        }
        done = chunks == 0;
    }

    private int length(long k) {
        return (int) Math.min(chunk, bytes - k * chunk);
    }

    @Override
    int progress() {
        return links.isHead() ? progressHead() : progressMember();
    }

    private int progressMember() {
        int work = 0;
        SendConnection up = links.toHead();
        while (upSent < chunks && up.hasRoom()) {
            int len = length(upSent);
            kernel.copy(in, base + upSent * chunk, up.fillSlot(), 0, len);
            up.publish(len);
            upSent++;
            work++;
        }
        RecvConnection down = links.fromHead();
        while (downReceived < chunks && down.hasData()) {
            int len = length(downReceived);
            checkSize(down, len);
            kernel.copy(down.dataSlot(), 0, out, base + downReceived * chunk, len);
            down.consume();
            downReceived++;
            work++;
        }
        done = downReceived == chunks;
        return work;
    }

    private int progressHead() {
        int work = 0;
        RecvConnection[] from = links.fromMembers();
        // Gather: a stage slot is free once its last chunk is copied out and sent to every member.
        while (gathered < chunks && gathered < completed + WINDOW && gathered < minDownSent() + WINDOW
                && membersHaveData()) {
            int s = (int) (gathered % WINDOW);
            int len = length(gathered);
            kernel.copy(in, base + gathered * chunk, stageSlots[s], 0, len);
            for (RecvConnection c : from) {
                checkSize(c, len);
                kernel.reduce(type, reduceOp, stageSlots[s], 0, c.dataSlot(), 0, stageSlots[s], 0, len / type.size());
                c.consume();
            }
            gathered++;
            work++;
        }
        try {
            while (posted < gathered) {
                int s = (int) (posted % WINDOW);
                NetRequest r = links.plugin().iallreduce(links.comm(), stageSlots[s], stageSlots[s],
                        length(posted) / type.size(), type, reduceOp, links.stageHandle(), links.stageHandle());
                if (r == null) {
                    break;
                }
                requests[s] = r;
                posted++;
                work++;
            }
            while (completed < posted) {
                int s = (int) (completed % WINDOW);
                if (!links.plugin().test(requests[s], size)) {
                    break;
                }
                requests[s] = null;
                int len = length(completed);
                if (op == ReduceOp.AVG) {
                    kernel.divide(type, stageSlots[s], 0, len / type.size(), links.nranks());
                }
                kernel.copy(stageSlots[s], 0, out, base + completed * chunk, len);
                completed++;
                work++;
            }
        } catch (NetException e) {
            throw new JcclException(e.result(), JcclException.NO_RANK, "CollNet all-reduce through "
                    + links.plugin().name() + " failed: " + e.getMessage(), e);
        }
        SendConnection[] to = links.toMembers();
        for (int m = 0; m < to.length; m++) {
            while (downSent[m] < completed && to[m].hasRoom()) {
                int s = (int) (downSent[m] % WINDOW);
                int len = length(downSent[m]);
                kernel.copy(stageSlots[s], 0, to[m].fillSlot(), 0, len);
                to[m].publish(len);
                downSent[m]++;
                work++;
            }
        }
        done = completed == chunks && minDownSent() == chunks;
        return work;
    }

    private boolean membersHaveData() {
        for (RecvConnection c : links.fromMembers()) {
            if (!c.hasData()) {
                return false;
            }
        }
        return true;
    }

    private long minDownSent() {
        long min = completed;
        for (long d : downSent) {
            min = Math.min(min, d);
        }
        return min;
    }

    private static void checkSize(RecvConnection c, int expected) {
        if (c.dataSize() != expected) {
            throw JcclException.invalidUsage("rank " + c.peer + " sent a " + c.dataSize() + "-byte CollNet chunk where "
                    + expected + " bytes were due: every rank must issue the same all-reduce");
        }
    }

    @Override
    String waitingFor() {
        if (!links.isHead()) {
            return "CollNet results from the host's head (" + downReceived + " of " + chunks + " chunks)";
        }
        return "CollNet: " + gathered + " chunks gathered, " + posted + " posted, " + completed + " reduced of "
                + chunks + " through " + links.plugin().name();
    }

    @Override
    int blockingPeer() {
        if (!links.isHead()) {
            return links.fromHead().peer;
        }
        for (RecvConnection c : links.fromMembers()) {
            if (gathered < chunks && !c.hasData()) {
                return c.peer;
            }
        }
        return -1;
    }
}
