package io.jccl.core.device;

import io.jccl.cuda.CudaDevice;
import io.jccl.cuda.CudaEvent;
import io.jccl.cuda.DeviceBuffer;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * A communicator's link between CUDA streams and its proxy, for collectives on device buffers.
 *
 * <p>Each stream-ordered operation gets a number {@code seq} and a slot of two 32-bit words in
 * pinned host memory, {@code ready} and {@code done}. On the caller's stream it queues: the copy of
 * its input into pinned staging, a write of {@code seq} to {@code ready}, a wait until {@code done}
 * reaches {@code seq}, the copy of the result back into the device buffer. The proxy starts the
 * operation once it reads {@code ready} (the stream got there, so the staged input is complete),
 * runs it on the staging like any host operation, and writes {@code done} when it ends. Both
 * comparisons are cyclic, so a slot is reused after {@link #SLOTS} operations without waiting:
 * operations end in order, so a slot's earlier operation has always ended by then.
 *
 * <p>Staging is pinned once per size class and kept until the communicator closes: freeing CUDA
 * memory waits for the whole GPU, and, for ranks that are threads of one process on one GPU, that
 * would wait for another rank's stream, itself waiting for this rank's next collective (NCCL's
 * users meet the same with {@code cudaFree}).
 *
 * <p>This is the data path for transports whose memory support is host only (pinned staging);
 * staging costs a device-to-host and a host-to-device copy at PCIe speed, around a collective
 * whose network path is slower.
 */
public final class StreamBridge implements AutoCloseable {
    static final int SLOTS = 256;

    private final CudaDevice device;
    private final DeviceBuffer words;
    private final StagingPool pool;
    /** Calls whose stream work may still use their staging, oldest first. */
    private final ArrayDeque<StagedCall> inFlight = new ArrayDeque<>();
    private int seq;
    private boolean closed;

    public StreamBridge(CudaDevice device) {
        this.device = device;
        this.words = device.allocatePinnedHost(SLOTS * 8L);
        words.segment().fill((byte) 0);
        this.pool = new StagingPool(device);
    }

    /** @return the GPU whose streams this bridge serves */
    public CudaDevice device() {
        return device;
    }

    /**
     * Starts a stream-ordered operation: the caller stages its buffers, queues copies in, builds and
     * submits the operation with the call as its gate, records copies out, then {@link StagedCall#enqueue}s.
     */
    public synchronized StagedCall begin(io.jccl.cuda.CudaStream stream, String what) {
        if (closed) {
            throw new IllegalStateException("the stream bridge is closed");
        }
        retireFinished();
        int s = ++seq;
        if (s == 0) {
            s = ++seq; // 0 is the words' initial value
        }
        int slot = Math.floorMod(s, SLOTS);
        MemorySegment slotWords = words.segment().asSlice(slot * 8L, 8);
        StagedCall call = new StagedCall(this, stream, what, s, slotWords.asSlice(0, 4), slotWords.asSlice(4, 4));
        inFlight.addLast(call);
        return call;
    }

    synchronized DeviceBuffer stage(long bytes) {
        return pool.acquire(bytes);
    }

    /** Returns the staging of calls whose stream work is over. */
    private void retireFinished() {
        StagedCall head;
        while ((head = inFlight.peekFirst()) != null && head.streamWorkDone()) {
            inFlight.pollFirst();
            head.releaseStaging(pool, true);
        }
    }

    /** @return pinned host memory held for staging (for tests and logs) */
    public synchronized long stagingBytes() {
        return pool.pinnedBytes();
    }

    /**
     * Waits (at most {@code timeoutNanos} in all) for the stream work of every call, whose staging
     * is in use until then, and frees the staging and the words. Call after the communicator's
     * operations ended (they released their streams). Memory a stream may still touch (its queue
     * held up by other work) is left allocated rather than freed under it.
     *
     * @return whether everything was freed
     */
    public synchronized boolean close(long timeoutNanos) {
        if (closed) {
            return true;
        }
        closed = true;
        long deadline = System.nanoTime() + timeoutNanos;
        boolean all = true;
        StagedCall c;
        while ((c = inFlight.pollFirst()) != null) {
            boolean over = c.awaitStreamWork(Math.max(0, deadline - System.nanoTime()));
            c.releaseStaging(pool, over);
            all &= over;
        }
        pool.close();
        if (all) {
            words.close();
        }
        return all;
    }

    @Override
    public void close() {
        close(java.util.concurrent.TimeUnit.SECONDS.toNanos(10));
    }

    static void close(CudaEvent e) {
        if (e != null) {
            e.close();
        }
    }
}
