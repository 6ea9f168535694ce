package io.jccl.core.collective;

import io.jccl.core.JcclException;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.DataType;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * One channel of a collective: runs a {@link RingAlgorithm}'s steps in order, each as slot-sized
 * slices, every slice as soon as its received slot is in and a send slot is free. A step's first
 * slice goes on while the previous rank still sends the later ones: that is the ring's pipeline.
 * The bytes go through the {@link ReductionKernel}; the proxy moves the slots.
 */
public final class RingTask extends Task {
    /** Steps per {@link #progress} call, so that other channels and the network get their turn. */
    private static final int STEPS_PER_PASS = 8;

    private final RingAlgorithm algorithm;
    private final String operation;
    private final SendConnection send;
    private final RecvConnection recv;
    private final ReductionKernel kernel;
    private final DataType type;
    private final ReduceOp accumulate;
    private final int divisor;
    private final MemorySegment input;
    private final MemorySegment output;
    private final long loops;
    private final int stepsPerLoop;
    private final long sliceElements;
    private final Step step = new Step();
    /** For {@link #start}, which walks every step once to count the messages to receive. */
    private final Step scratch = new Step();
    private long loop;
    private int j;
    private boolean stepReady;
    private long slice;
    private long slices;

    /**
     * @param operation  for messages, e.g. {@code allReduce}
     * @param send       the channel's connection to the next rank, or {@code null} on one rank
     * @param recv       the channel's connection from the previous rank, or {@code null} on one rank
     * @param op         the operation; {@link ReduceOp#AVG} sums and divides by {@code divisor} at the end
     * @param divisor    ranks, for an average
     */
    RingTask(RingAlgorithm algorithm, long sliceElements, String operation, SendConnection send, RecvConnection recv,
             ReductionKernel kernel, DataType type, ReduceOp op, int divisor, MemorySegment input, MemorySegment output) {
        this.algorithm = algorithm;
        this.sliceElements = Math.max(1, sliceElements);
        this.operation = operation;
        this.send = send;
        this.recv = recv;
        this.kernel = kernel;
        this.type = type;
        this.accumulate = op == ReduceOp.AVG ? ReduceOp.SUM : op;
        this.divisor = op == ReduceOp.AVG ? divisor : 1;
        this.input = input;
        this.output = output;
        this.loops = algorithm.loops();
        this.stepsPerLoop = algorithm.stepsPerLoop();
        this.done = loops == 0;
    }

    @Override
    void start() {
        if (recv == null || algorithm.recvsPerLoop() == 0) {
            return;
        }
        long messages = 0;
        Step s = scratch;
        for (long l = 0; l < loops; l++) {
            for (int k = 0; k < stepsPerLoop; k++) {
                algorithm.step(l, k, s);
                if (s.has(Step.RECV)) {
                    messages += slicesOf(s.count);
                }
            }
        }
        recv.expect(messages);
    }

    private long slicesOf(long count) {
        return Math.max(1, (count + sliceElements - 1) / sliceElements);
    }

    @Override
    int progress() {
        int work = 0;
        while (loop < loops && work < STEPS_PER_PASS) {
            if (!stepReady) {
                algorithm.step(loop, j, step);
                slices = slicesOf(step.count);
                slice = 0;
                stepReady = true;
            }
            if (step.has(Step.RECV) && !recv.hasData() || step.has(Step.SEND) && !send.hasRoom()) {
                break;
            }
            long first = slice * sliceElements;
            execute(first, Math.max(0, Math.min(sliceElements, step.count - first)));
            work++;
            if (++slice < slices) {
                continue;
            }
            stepReady = false;
            if (++j == stepsPerLoop) {
                j = 0;
                loop++;
            }
        }
        if (loop == loops) {
            done = true;
        }
        return work;
    }

    /** Runs elements {@code [first, first + count)} of the current step: one slice, one message. */
    private void execute(long first, long count) {
        int size = type.size();
        long bytes = count * size;
        long in = (step.inOffset + first) * size;
        long out = (step.outOffset + first) * size;
        boolean sends = step.has(Step.SEND);
        MemorySegment sendSlot = sends ? send.fillSlot() : null;
        if (step.has(Step.RECV)) {
            MemorySegment data = recv.dataSlot();
            if (recv.dataSize() != bytes) {
                throw new JcclException(NetResult.INVALID_USAGE, recv.peer, "rank " + recv.peer + " sent "
                        + recv.dataSize() + " bytes where this rank expected " + bytes + " (" + operation + ", "
                        + algorithm.name() + " loop " + loop + " step " + j + " slice " + slice + "): did every rank call " + operation
                        + " with the same count, type and root?", null);
            }
            if (step.has(Step.REDUCE)) {
                boolean toOutput = step.has(Step.OUTPUT);
                MemorySegment dst = toOutput ? output : sendSlot;
                long dstOffset = toOutput ? out : 0;
                kernel.reduce(type, accumulate, data, 0, input, in, dst, dstOffset, count);
                if (step.has(Step.POSTOP) && divisor != 1) {
                    kernel.divide(type, dst, dstOffset, count, divisor);
                }
                if (toOutput && sends) {
                    kernel.copy(dst, dstOffset, sendSlot, 0, bytes);
                }
            } else {
                if (step.has(Step.OUTPUT)) {
                    kernel.copy(data, 0, output, out, bytes);
                }
                if (sends) {
                    kernel.copy(data, 0, sendSlot, 0, bytes);
                }
            }
            recv.consume();
        } else {
            if (sends) {
                kernel.copy(input, in, sendSlot, 0, bytes);
            }
            if (step.has(Step.OUTPUT)) {
                kernel.copy(input, in, output, out, bytes);
                if (step.has(Step.POSTOP) && divisor != 1) {
                    kernel.divide(type, output, out, count, divisor);
                }
            }
        }
        if (sends) {
            send.publish((int) bytes);
        }
    }

    @Override
    int blockingPeer() {
        if (stepReady && step.has(Step.RECV) && !recv.hasData()) {
            return recv.peer;
        }
        if (stepReady && step.has(Step.SEND) && !send.hasRoom()) {
            return send.peer;
        }
        return -1;
    }

    @Override
    String waitingFor() {
        if (stepReady && step.has(Step.RECV) && !recv.hasData()) {
            return recv.waitingFor();
        }
        if (stepReady && step.has(Step.SEND) && !send.hasRoom()) {
            return send.waitingFor();
        }
        return algorithm.name() + " loop " + loop + " step " + j + " slice " + slice;
    }
}
