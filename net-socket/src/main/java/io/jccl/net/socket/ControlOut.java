package io.jccl.net.socket;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * The outbound side of a control stream, used by the comm's caller thread only.
 *
 * <p>Frames (and inline payloads) are written into a staging ring; large payloads of a comm without
 * data streams are queued as references to registered memory and written from there, without a
 * copy. An ordered queue of entries keeps frames and payloads in sending order. Staging is a
 * "bip" ring: a frame is never split, and space frees as entries are written.
 */
final class ControlOut {
    static final int STAGING_BYTES = 256 << 10;
    static final int ENTRIES = 1024;

    private final SocketChannel channel;
    /** Direct socket calls on the channel's descriptor, or null for the channel's own (NIO). */
    private volatile NativeSocketIo direct;
    private final ByteBuffer staging = ByteBuffer.allocateDirect(STAGING_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer stagingWriter = staging.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    private final MemorySegment stagingMemory = MemorySegment.ofBuffer(staging);

    // Entry ring: a staged range [start, end) when region == null, else a payload range.
    private final int[] start = new int[ENTRIES];
    private final int[] end = new int[ENTRIES];
    private final MemoryRegion[] region = new MemoryRegion[ENTRIES];
    private final long[] offset = new long[ENTRIES];
    private final long[] length = new long[ENTRIES];
    private final SocketRequest[] owner = new SocketRequest[ENTRIES];
    private long head;
    private long tail;
    /** Bytes of the head entry already written. */
    private long doneInHead;
    /** The end of the newest staged bytes: where the next frame goes if there is room. */
    private int stageTail;
    /**
     * Times the queue went from idle to busy. With {@link #writtenBytes} it makes the stall
     * watchdog's mark, which changes whenever bytes leave or the queue becomes busy: the watchdog
     * reads the clock, not each message (a clock read costs about 0.1 us in a virtual machine).
     */
    private long busySpells;
    /** Bytes ever queued (frames and payloads) and ever written: a queued byte is written once written >= its mark. */
    private long queuedBytes;
    private long writtenBytes;

    ControlOut(SocketChannel channel, NativeSocketIo direct) {
        this.channel = channel;
        this.direct = direct;
    }

    /** Before the channel closes: no direct call may name its descriptor after that. */
    void stopDirectCalls() {
        direct = null;
    }

    /** @return whether entries are waiting to be written */
    boolean busy() {
        return head != tail;
    }

    /** @return whether {@code bytes} of frames plus {@code payloads} payload entries fit now */
    boolean hasRoom(int bytes, int payloads) {
        return tail - head + 1 + payloads <= ENTRIES && findStagingSpace(bytes) >= 0;
    }

    /**
     * Reserves {@code bytes} of staging for one frame and returns a buffer positioned there; the
     * caller puts exactly {@code bytes} bytes. The caller has checked {@link #hasRoom}.
     */
    ByteBuffer stage(int bytes) {
        countSpellIfIdle();
        int at = findStagingSpace(bytes);
        int last = idx(tail - 1);
        if (head != tail && region[last] == null && end[last] == at) {
            // Contiguous with the newest staged frame: one entry, one write.
            end[idx(tail - 1)] = at + bytes;
        } else {
            int i = idx(tail);
            start[i] = at;
            end[i] = at + bytes;
            region[i] = null;
            tail++;
        }
        stageTail = at + bytes;
        queuedBytes += bytes;
        stagingWriter.limit(at + bytes).position(at);
        return stagingWriter;
    }

    /** @return the staging memory, to copy inline payloads into the reserved range */
    MemorySegment stagingMemory() {
        return stagingMemory;
    }

    /** Queues a payload to be written from registered memory; the caller has checked {@link #hasRoom}. */
    void payload(MemoryRegion r, long off, long len, SocketRequest req) {
        countSpellIfIdle();
        int i = idx(tail);
        region[i] = r;
        offset[i] = off;
        length[i] = len;
        owner[i] = req;
        tail++;
        queuedBytes += len;
    }

    /** @return the mark of everything queued so far: {@link #hasWritten} of it says when all of it is written */
    long queuedMark() {
        return queuedBytes;
    }

    /** @return whether every byte queued up to {@code mark} ({@link #queuedMark}) is with the kernel */
    boolean hasWritten(long mark) {
        return writtenBytes >= mark;
    }

    /**
     * Writes what the socket accepts without blocking.
     *
     * @return bytes written
     */
    long flush() throws IOException {
        long written = 0;
        NativeSocketIo d = direct;
        while (head != tail) {
            int i = idx(head);
            long entryBytes = region[i] == null ? end[i] - start[i] : length[i];
            long n;
            if (region[i] == null) {
                // No gathering write of frame and payload: NIO allocates per call when a buffer in
                // the gather is backed by a memory segment, and the data path must allocate nothing.
                int from = start[i] + (int) doneInHead;
                if (d != null) {
                    n = d.write(stagingMemory.address() + from, end[i] - from);
                } else {
                    staging.limit(end[i]).position(from);
                    n = channel.write(staging);
                }
            } else {
                int step = (int) Math.min(entryBytes - doneInHead, MemoryRegion.WINDOW_STEP);
                if (d != null && region[i].isReleased()) {
                    // A direct call reads the address as it is: never memory given back (NIO's
                    // view of a freed mirror would throw instead).
                    throw new IOException("a send's registration was released before the send completed");
                }
                n = d != null ? d.write(region[i].memory.address() + offset[i] + doneInHead, step)
                        : channel.write(region[i].view(0, offset[i] + doneInHead, step));
                if (n > 0) {
                    owner[i].moved(n);
                }
            }
            if (n <= 0) {
                break;
            }
            written += n;
            if (!advance(n)) {
                break;
            }
        }
        if (written > 0) {
            writtenBytes += written;
        }
        return written;
    }

    /**
     * Accounts {@code n} written bytes against the head entries, retiring the ones completed.
     *
     * @return whether every entry touched was completed (so the socket may take more)
     */
    private boolean advance(long n) {
        while (n > 0) {
            int i = idx(head);
            long entryBytes = region[i] == null ? end[i] - start[i] : length[i];
            long take = Math.min(n, entryBytes - doneInHead);
            doneInHead += take;
            n -= take;
            if (doneInHead < entryBytes) {
                return false;
            }
            region[i] = null;
            owner[i] = null;
            doneInHead = 0;
            head++;
        }
        return true;
    }

    /** @return a number that changes whenever bytes leave or the queue becomes busy, and only then */
    long progressMark() {
        return writtenBytes + busySpells;
    }

    private void countSpellIfIdle() {
        if (head == tail) {
            busySpells++;
        }
    }

    private int idx(long seq) {
        return (int) (seq & (ENTRIES - 1));
    }

    /** The start of the oldest staged bytes not yet written, or -1 if none are pending. */
    private int oldestStaged() {
        for (long s = head; s != tail; s++) {
            int i = idx(s);
            if (region[i] == null) {
                return start[i] + (s == head ? (int) doneInHead : 0);
            }
        }
        return -1;
    }

    /**
     * Pending staged bytes occupy [oldest, stageTail) when oldest < stageTail, else they wrap:
     * [oldest, end of ring) and [0, stageTail), and the free space is [stageTail, oldest).
     *
     * @return where {@code bytes} can be staged contiguously, or -1 if nowhere yet
     */
    private int findStagingSpace(int bytes) {
        if (bytes > STAGING_BYTES) {
            return -1;
        }
        int oldest = oldestStaged();
        if (oldest < 0) {
            return 0;
        }
        if (oldest < stageTail) {
            if (stageTail + bytes <= STAGING_BYTES) {
                return stageTail;
            }
            return bytes <= oldest ? 0 : -1;
        }
        return stageTail + bytes <= oldest ? stageTail : -1;
    }
}
