package io.jccl.core.collective;

import io.jccl.core.JcclException;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.NetRecvConnection;
import io.jccl.core.transport.NetSendConnection;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.DataType;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * An all-reduce by recursive halving and doubling (Rabenseifner's algorithm, MPI's choice for
 * mid-sized all-reduces): a reduce-scatter in {@code log2 n} rounds, each exchanging half of the
 * range still being reduced with the partner at distance {@code n/2, n/4, ..., 1}, then an
 * all-gather in the same rounds backwards. Each rank sends and receives {@code 2(n-1)/n} of the
 * buffer, as around a ring, but in {@code 2 log2 n} rounds instead of {@code 2(n-1)} steps, and
 * each round waits on one partner, not on the whole ring: on a host with fewer cores than ranks
 * (4 ranks on 2 cores) the two pairs of a round make progress while the other pair is off its
 * core, where a ring step needs every rank of the ring to have run.
 *
 * <p>The buffer is cut into {@code n} blocks (64-byte aligned); rank {@code r} ends the
 * reduce-scatter owning block {@code r}. Round by round both partners agree on the blocks each
 * keeps, so each receives exactly the messages the other sends: every range goes as slot-sized
 * messages, and an empty range as one empty message. Needs {@code n} a power of two.
 *
 * <p>Over the network, a range is sent from the user's buffer itself where the connection has it
 * registered ({@link NetSendConnection#publishDirect}): the input in the first round (out of place),
 * the output after that; and the all-gather's messages are received straight into the output
 * ({@link NetRecvConnection#receiveInto}). The all-gather writes the ranges that the reduce-scatter
 * sent from the output (in place, from the start), but only with data the partner could send once
 * it had received those very ranges: the sends have read them by then. The task ends once all its
 * sends from the user's buffers are complete, since the caller may write the buffers next.
 */
public final class HalvingDoublingTask extends Task {
    private final int n;
    private final int me;
    private final int rounds;
    private final SendConnection[] send;
    private final RecvConnection[] recv;
    private final ReductionKernel kernel;
    private final DataType type;
    private final ReduceOp accumulate;
    private final int divisor;
    private final MemorySegment input;
    private final MemorySegment output;
    private final long base;
    private final long count;
    private final long block;
    private final long sliceElements;
    private final String operation;

    /** 0 .. rounds-1: reduce-scatter; rounds .. 2 rounds-1: all-gather. */
    private int phase;
    /** This rank's blocks at the start of the current phase: [firstBlock, firstBlock + blocks). */
    private int firstBlock;
    private int blocks;
    private long sendFirst;
    private long sendCount;
    private long recvFirst;
    private long recvCount;
    private long sendSlices;
    private long recvSlices;
    private long sentSlices;
    private long receivedSlices;
    /** Per round's partner: the connection when it may send from the user's buffers, else {@code null}. */
    private final NetSendConnection[] direct;
    private final MemoryHandle[] inputHandles;
    private final MemoryHandle[] outputHandles;
    /** Per round's partner: messages that must be complete before this task ends. */
    private final long[] sentUntil;

    /**
     * @param send      per round of the reduce-scatter, the connection to that round's partner
     *                  ({@code me ^ (n >> (round + 1))}); the all-gather uses them backwards
     * @param recv      the connections from the same partners
     * @param base      first element of this task's share of the buffers
     * @param count     elements of the share
     * @param sliceElements most elements one message moves (a slot)
     */
    HalvingDoublingTask(int n, int me, SendConnection[] send, RecvConnection[] recv, ReductionKernel kernel, DataType type,
                        ReduceOp op, MemorySegment input, MemorySegment output, long base, long count, long sliceElements,
                        String operation) {
        if (Integer.bitCount(n) != 1 || n < 2) {
            throw new IllegalArgumentException("halving-doubling needs a power of two of ranks, got " + n);
        }
        this.n = n;
        this.me = me;
        this.rounds = Integer.numberOfTrailingZeros(n);
        this.send = send;
        this.recv = recv;
        this.kernel = kernel;
        this.type = type;
        this.accumulate = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        this.divisor = op == ReduceOp.AVG ? n : 1;
        this.input = input;
        this.output = output;
        this.base = base;
        this.count = count;
        long align = Math.max(1, 64 / type.size());
        this.block = Math.max(align, (RingAlgorithm.ceilDiv(count, n) + align - 1) / align * align);
        this.sliceElements = Math.max(1, sliceElements);
        this.operation = operation;
        this.firstBlock = 0;
        this.blocks = n;
        this.direct = new NetSendConnection[rounds];
        for (int r = 0; r < rounds; r++) {
            direct[r] = send[r] instanceof NetSendConnection c && kernel.onHost() ? c : null;
        }
        this.inputHandles = new MemoryHandle[rounds];
        this.outputHandles = new MemoryHandle[rounds];
        this.sentUntil = new long[rounds];
        this.done = count == 0;
        if (!done) {
            enterPhase();
        }
    }

    /** @return the round's partner's index into {@link #send} and {@link #recv} */
    private int round() {
        return phase < rounds ? phase : 2 * rounds - 1 - phase;
    }

    /** @return elements of blocks {@code [first, first + k)} that lie inside the share */
    private long elementsOf(int first, int k) {
        long start = Math.min(count, first * block);
        long end = Math.min(count, (long) (first + k) * block);
        return end - start;
    }

    private long slicesOf(long elements) {
        return Math.max(1, RingAlgorithm.ceilDiv(elements, sliceElements));
    }

    /** Works out what the current phase sends and receives (element offsets within the share). */
    private void enterPhase() {
        int distance = n >> (round() + 1);
        boolean low = (me & distance) == 0;
        if (phase < rounds) {
            // Reduce-scatter: keep one half of this rank's blocks, give the partner the other.
            int half = blocks / 2;
            int keep = low ? firstBlock : firstBlock + half;
            int give = low ? firstBlock + half : firstBlock;
            sendFirst = Math.min(count, give * block);
            sendCount = elementsOf(give, half);
            recvFirst = Math.min(count, keep * block);
            recvCount = elementsOf(keep, half);
        } else {
            // All-gather: send this rank's blocks, take the partner's as many next to them.
            int theirs = low ? firstBlock + blocks : firstBlock - blocks;
            sendFirst = Math.min(count, firstBlock * block);
            sendCount = elementsOf(firstBlock, blocks);
            recvFirst = Math.min(count, theirs * block);
            recvCount = elementsOf(theirs, blocks);
        }
        sendSlices = slicesOf(sendCount);
        recvSlices = slicesOf(recvCount);
        sentSlices = 0;
        receivedSlices = 0;
    }

    private void leavePhase() {
        int distance = n >> (round() + 1);
        boolean low = (me & distance) == 0;
        if (phase < rounds) {
            blocks /= 2;
            firstBlock = low ? firstBlock : firstBlock + blocks;
            if (phase == rounds - 1 && divisor != 1) {
                // This rank's block is final: the average's division, once, before it is shared.
                long first = Math.min(count, firstBlock * block);
                long k = elementsOf(firstBlock, 1);
                if (k > 0) {
                    kernel.divide(type, output, (base + first) * type.size(), k, divisor);
                }
            }
        } else {
            firstBlock = low ? firstBlock : firstBlock - blocks;
            blocks *= 2;
        }
        phase++;
        if (phase < 2 * rounds) {
            enterPhase();
        }
    }

    /** @return the round whose sends in {@code until} are not all complete, or -1 */
    private int sending(long[] until) {
        for (int r = 0; r < rounds; r++) {
            if (until[r] != 0 && direct[r].completed() < until[r]) {
                return r;
            }
        }
        return -1;
    }

    @Override
    void start() {
        if (done) {
            return;
        }
        boolean inPlace = OperationBuilder.overlap(input, output);
        for (int r = 0; r < rounds; r++) {
            if (direct[r] != null) {
                outputHandles[r] = direct[r].directHandle(output);
                // In place the input is the output: the first round sends from there too.
                inputHandles[r] = inPlace ? outputHandles[r] : direct[r].directHandle(input);
            }
        }
        // Each partner sends one range in its reduce-scatter round and one in its all-gather round.
        long[] messages = new long[rounds];
        long[] gatherFirst = new long[rounds];
        long[] gatherCount = new long[rounds];
        int first = 0;
        int k = n;
        for (int r = 0; r < rounds; r++) {
            int distance = n >> (r + 1);
            boolean low = (me & distance) == 0;
            k /= 2;
            first = low ? first : first + k;
            messages[r] += slicesOf(elementsOf(first, k));
        }
        for (int r = rounds - 1; r >= 0; r--) {
            int distance = n >> (r + 1);
            boolean low = (me & distance) == 0;
            int theirs = low ? first + k : first - k;
            messages[r] += slicesOf(elementsOf(theirs, k));
            gatherFirst[r] = Math.min(count, theirs * block);
            gatherCount[r] = elementsOf(theirs, k);
            first = low ? first : first - k;
            k *= 2;
        }
        // The all-gather's messages land straight in the output: after each partner's reduce-scatter
        // messages on the same connection, in the all-gather's order.
        for (int r = 0; r < rounds; r++) {
            MemoryHandle into = recv[r] instanceof NetRecvConnection c && kernel.onHost() ? c.directHandle(output) : null;
            if (into != null) {
                NetRecvConnection c = (NetRecvConnection) recv[r];
                long index = c.expected() + messages[r] - slicesOf(gatherCount[r]);
                int size = type.size();
                for (long i = 0; i * sliceElements < gatherCount[r]; i++) {
                    long from = i * sliceElements;
                    long len = Math.min(sliceElements, gatherCount[r] - from);
                    c.receiveInto(index + i, output, (base + gatherFirst[r] + from) * size, (int) (len * size), into);
                }
            }
            recv[r].expect(messages[r]);
        }
    }

    @Override
    int progress() {
        int work = 0;
        while (phase < 2 * rounds) {
            int r = round();
            int moved = 0;
            SendConnection out = send[r];
            while (sentSlices < sendSlices && out.hasRoom()) {
                sendSlice(out, r);
                moved++;
            }
            RecvConnection in = recv[r];
            while (receivedSlices < recvSlices && in.hasData()) {
                receiveSlice(in);
                moved++;
            }
            work += moved;
            if (sentSlices == sendSlices && receivedSlices == recvSlices) {
                leavePhase();
            } else if (moved == 0) {
                break;
            }
        }
        if (phase == 2 * rounds) {
            done = sending(sentUntil) < 0;
        }
        return work;
    }

    private void sendSlice(SendConnection out, int r) {
        int size = type.size();
        long first = sentSlices * sliceElements;
        long k = Math.max(0, Math.min(sliceElements, sendCount - first));
        // The first round reads the input; later ones what earlier rounds reduced into the output.
        MemorySegment from = phase == 0 ? input : output;
        MemoryHandle handle = phase == 0 ? inputHandles[r] : outputHandles[r];
        long at = (base + sendFirst + first) * size;
        if (k > 0 && handle != null) {
            sentUntil[r] = direct[r].publishDirect(from, at, (int) (k * size), handle);
        } else {
            if (k > 0) {
                kernel.copy(from, at, out.fillSlot(), 0, k * size);
            }
            out.publish((int) (k * size));
        }
        sentSlices++;
    }

    private void receiveSlice(RecvConnection in) {
        int size = type.size();
        long first = receivedSlices * sliceElements;
        long k = Math.max(0, Math.min(sliceElements, recvCount - first));
        if (in.dataSize() != k * size) {
            throw new JcclException(NetResult.INVALID_USAGE, in.peer, "rank " + in.peer + " sent " + in.dataSize()
                    + " bytes where this rank expected " + k * size + " (" + operation + ", halving-doubling round "
                    + phase + " slice " + receivedSlices + "): did every rank call " + operation
                    + " with the same count and type?", null);
        }
        if (k > 0) {
            long at = (base + recvFirst + first) * size;
            if (phase < rounds) {
                kernel.reduce(type, accumulate, in.dataSlot(), 0, phase == 0 ? input : output, at, output, at, k);
            } else if (!(in instanceof NetRecvConnection c && c.receivedDirectly())) {
                kernel.copy(in.dataSlot(), 0, output, at, k * size);
            }
        }
        in.consume();
        receivedSlices++;
    }

    @Override
    int blockingPeer() {
        if (done) {
            return -1;
        }
        int busy = waitingForSends();
        if (busy >= 0) {
            return send[busy].peer;
        }
        int r = round();
        return receivedSlices < recvSlices ? recv[r].peer : send[r].peer;
    }

    /** @return the round whose sends from the user's buffer hold this task up now, or -1 */
    private int waitingForSends() {
        return phase == 2 * rounds ? sending(sentUntil) : -1;
    }

    @Override
    String waitingFor() {
        if (done) {
            return "halving-doubling all-reduce done";
        }
        int busy = waitingForSends();
        if (busy >= 0) {
            return send[busy].waitingFor() + " (halving-doubling: sends from the user's buffer to complete)";
        }
        int r = round();
        return (receivedSlices < recvSlices ? recv[r].waitingFor() : send[r].waitingFor())
                + " (halving-doubling " + (phase < rounds ? "reduce-scatter" : "all-gather") + " round " + phase
                + ", slice " + receivedSlices + " of " + recvSlices + " received, " + sentSlices + " of " + sendSlices
                + " sent)";
    }
}
