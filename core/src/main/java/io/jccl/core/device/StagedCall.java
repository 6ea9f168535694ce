package io.jccl.core.device;

import io.jccl.core.JcclException;
import io.jccl.core.collective.StreamGate;
import io.jccl.cuda.CudaEvent;
import io.jccl.cuda.CudaException;
import io.jccl.cuda.CudaStream;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.NetResult;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One stream-ordered operation's part on its CUDA stream (see {@link StreamBridge}), and its
 * operation's {@link StreamGate}. The issuing thread, in order: {@link #staging} and
 * {@link #copyIn}, submit the operation gated on this call, {@link #copyOut}, {@link #enqueue};
 * or {@link #cancel} if the operation could not be issued.
 */
public final class StagedCall implements StreamGate {
    private static final VarHandle WORD = ValueLayout.JAVA_INT.varHandle();
    /** How often a gate that stays closed asks the driver whether the stream failed. */
    private static final long STREAM_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final StreamBridge bridge;
    private final CudaStream stream;
    private final String what;
    private final int seq;
    private final MemorySegment ready;
    private final MemorySegment done;
    private final List<DeviceBuffer> staging = new ArrayList<>(2);
    private final List<MemorySegment> copiesOut = new ArrayList<>(4);
    private volatile boolean enqueued;
    private volatile RuntimeException enqueueFailure;
    private volatile CudaEvent end;
    private volatile boolean abandoned;
    private long nextStreamCheck;

    StagedCall(StreamBridge bridge, CudaStream stream, String what, int seq, MemorySegment ready, MemorySegment done) {
        this.bridge = bridge;
        this.stream = stream;
        this.what = what;
        this.seq = seq;
        this.ready = ready;
        this.done = done;
    }

    /** @return pinned host memory of {@code bytes} for this call, reused once its stream work is over */
    public MemorySegment staging(long bytes) {
        DeviceBuffer b = bridge.stage(bytes);
        staging.add(b);
        return b.segment().asSlice(0, bytes);
    }

    /** Queues the copy of the caller's device buffer {@code from} into staging {@code into}, now. */
    public void copyIn(MemorySegment into, MemorySegment from) {
        stream.copyAsync(into, from);
    }

    /** Records the copy of staging {@code from} into the device buffer {@code into}, queued after the operation. */
    public void copyOut(MemorySegment into, MemorySegment from) {
        copiesOut.add(into);
        copiesOut.add(from);
    }

    /**
     * Queues the hand-over and the copies out on the stream; the operation was submitted with this
     * call as its gate.
     *
     * @throws JcclException if CUDA refused (the operation then fails too: its gate reports it)
     */
    public void enqueue() {
        try {
            stream.writeValueAsync(ready, seq);
            stream.waitValueAsync(done, seq);
            for (int i = 0; i < copiesOut.size(); i += 2) {
                stream.copyAsync(copiesOut.get(i), copiesOut.get(i + 1));
            }
            end = stream.record();
            enqueued = true;
        } catch (RuntimeException e) {
            enqueueFailure = e;
            retireAfterQueuedWork();
            throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, what + " could not be queued on its CUDA stream: "
                    + e.getMessage(), e);
        }
    }

    /** The operation was not issued: nothing waits on this call; its staging is freed after the copies in. */
    public void cancel() {
        retireAfterQueuedWork();
    }

    /**
     * Marks where the stream's work for this call ends, so its staging is reused after it; if the
     * stream takes nothing more, no copy of it will run and the staging is dropped.
     */
    private void retireAfterQueuedWork() {
        try {
            end = stream.record();
        } catch (RuntimeException e) {
            abandoned = true;
        }
    }

    // ---- StreamGate, proxy thread

    @Override
    public boolean isOpen() {
        if ((int) WORD.getVolatile(ready, 0L) - seq >= 0) {
            return true;
        }
        RuntimeException f = enqueueFailure;
        if (f != null) {
            throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, what + " could not be queued on its CUDA stream: "
                    + f.getMessage(), f);
        }
        long now = System.nanoTime();
        if (enqueued && now - nextStreamCheck >= 0) {
            nextStreamCheck = now + STREAM_CHECK_NANOS;
            try {
                stream.isIdle();
            } catch (CudaException e) {
                throw new JcclException(NetResult.UNHANDLED_CUDA_ERROR, JcclException.NO_RANK, what + " waits for its CUDA stream, whose "
                        + "earlier work failed: " + e.getMessage(), e);
            } catch (IllegalStateException e) {
                throw JcclException.invalidUsage(what + " waits for a CUDA stream that was closed: " + e.getMessage());
            }
        }
        return false;
    }

    @Override
    public void release(boolean succeeded) {
        WORD.setVolatile(done, 0L, seq);
    }

    // ---- the bridge, under its lock

    boolean streamWorkDone() {
        if (abandoned) {
            return true;
        }
        CudaEvent e = end;
        if (e == null) {
            return false;
        }
        try {
            return e.isDone();
        } catch (RuntimeException failed) {
            return true;
        }
    }

    /** Waits for the stream work, at most {@code timeoutNanos}. @return whether it is over */
    boolean awaitStreamWork(long timeoutNanos) {
        long start = System.nanoTime();
        while (!streamWorkDone()) {
            if (System.nanoTime() - start > timeoutNanos) {
                return false;
            }
            Thread.onSpinWait();
            Thread.yield();
        }
        return true;
    }

    void releaseStaging(StagingPool pool, boolean reusable) {
        for (DeviceBuffer b : staging) {
            if (reusable && !abandoned) {
                pool.release(b);
            }
        }
        staging.clear();
        StreamBridge.close(end);
        end = null;
    }

    @Override
    public String toString() {
        return what + " #" + seq + " on " + stream;
    }
}
