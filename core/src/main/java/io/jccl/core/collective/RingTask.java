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
 * One channel of a collective: runs a {@link RingAlgorithm}'s steps in order, each as slot-sized
 * slices, every slice as soon as its received slot is in and a send slot is free. A step's first
 * slice goes on while the previous rank still sends the later ones: that is the ring's pipeline.
 * The bytes go through the {@link ReductionKernel}; the proxy moves the slots. Over the network,
 * a step whose bytes are already final in the user's buffer (the input, or output the step just
 * wrote) is sent from there without a copy ({@link NetSendConnection#publishDirect}), and the task
 * ends only once those sends are complete; a message the step only stores in the output is received
 * straight there ({@link NetRecvConnection#receiveInto}).
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
    /** The send connection when it may send from the user's buffers, else {@code null}. */
    private final NetSendConnection direct;
    /** Registrations of {@link #input} and {@link #output} with {@link #direct}; {@code null}: copy into a slot. */
    private MemoryHandle inputHandle;
    private MemoryHandle outputHandle;
    /** The receive connection when messages may land in the output itself, else {@code null}. */
    private final NetRecvConnection directRecv;
    /** Messages {@link #direct} must have completed before this task ends: the last sent from the user's buffer. */
    private long directUntil;

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
        this.direct = send instanceof NetSendConnection n && kernel.onHost() ? n : null;
        this.directRecv = recv instanceof NetRecvConnection n && kernel.onHost() ? n : null;
    }

    @Override
    void start() {
        if (direct != null && !done) {
            // (A root-less rank of a broadcast has no input, a reduce's non-root no output.)
            outputHandle = output == null ? null : direct.directHandle(output);
            // The input is sent from only where nothing of this operation writes it (out of place):
            // in place, a later step's output would overwrite bytes a send may still be reading.
            inputHandle = input == null || output != null && OperationBuilder.overlap(input, output) ? null : direct.directHandle(input);
        }
        if (recv == null || algorithm.recvsPerLoop() == 0) {
            return;
        }
        // Messages a step only stores in the output (an all-gather's, a broadcast's) go straight there.
        MemoryHandle into = directRecv != null && output != null ? directRecv.directHandle(output) : null;
        long first = into != null ? directRecv.expected() : 0;
        long messages = 0;
        Step s = scratch;
        for (long l = 0; l < loops; l++) {
            for (int k = 0; k < stepsPerLoop; k++) {
                algorithm.step(l, k, s);
                if (!s.has(Step.RECV)) {
                    continue;
                }
                long n = slicesOf(s.count);
                if (into != null && s.has(Step.OUTPUT) && !s.has(Step.REDUCE)) {
                    int size = type.size();
                    for (long i = 0; i < n; i++) {
                        long from = i * sliceElements;
                        long bytes = Math.max(0, Math.min(sliceElements, s.count - from)) * size;
                        if (bytes > 0) {
                            directRecv.receiveInto(first + messages + i, output, (s.outOffset + from) * size, (int) bytes, into);
                        }
                    }
                }
                messages += n;
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
            done = directUntil == 0 || direct.completed() >= directUntil;
        }
        return work;
    }

    /** @return whether the last steps are done but a send from the user's buffer is still going out */
    private boolean sendingDirect() {
        return loop == loops && !done;
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
                    sendFinal(output, out, outputHandle, bytes);
                    sends = false;
                }
            } else {
                if (step.has(Step.OUTPUT)) {
                    if (directRecv == null || !directRecv.receivedDirectly()) {
                        kernel.copy(data, 0, output, out, bytes);
                    }
                    if (sends) {
                        sendFinal(output, out, outputHandle, bytes);
                        sends = false;
                    }
                }
                if (sends) {
                    kernel.copy(data, 0, sendSlot, 0, bytes);
                }
            }
            recv.consume();
        } else {
            if (sends) {
                sendFinal(input, in, inputHandle, bytes);
                sends = false;
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

    /**
     * Sends {@code bytes} of {@code buffer} at {@code offset}, final for this operation: from the
     * buffer itself where it is registered with the connection, else through a copy into the slot.
     */
    private void sendFinal(MemorySegment buffer, long offset, MemoryHandle handle, long bytes) {
        if (handle != null && bytes > 0) {
            directUntil = direct.publishDirect(buffer, offset, (int) bytes, handle);
        } else {
            kernel.copy(buffer, offset, send.fillSlot(), 0, bytes);
            send.publish((int) bytes);
        }
    }

    @Override
    int blockingPeer() {
        if (sendingDirect()) {
            return send.peer;
        }
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
        if (sendingDirect()) {
            return send.waitingFor();
        }
        if (stepReady && step.has(Step.RECV) && !recv.hasData()) {
            return recv.waitingFor();
        }
        if (stepReady && step.has(Step.SEND) && !send.hasRoom()) {
            return send.waitingFor();
        }
        return algorithm.name() + " loop " + loop + " step " + j + " slice " + slice;
    }
}
