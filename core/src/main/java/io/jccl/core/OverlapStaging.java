package io.jccl.core;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Memory for the sends that an operation's own receives overwrite (in-place send/recv or
 * all-to-all: the sends are copied at launch), kept and handed out again once the operation that
 * used it is done. A fresh allocation per call costs a page fault per 4 KiB at its first touch, and
 * an exchange in place runs the same sizes call after call, several in flight.
 */
final class OverlapStaging {
    private final List<MemorySegment> buffers = new ArrayList<>();
    private final List<Completion> users = new ArrayList<>();

    /**
     * @param bytes memory needed
     * @param user  the operation that will use it until it is done
     * @return {@code bytes} bytes, 64-byte aligned, that no unfinished operation uses
     */
    synchronized MemorySegment take(long bytes, Completion user) {
        int free = -1;
        for (int i = 0; i < buffers.size(); i++) {
            if (users.get(i).isDone()) {
                if (buffers.get(i).byteSize() >= bytes) {
                    users.set(i, user);
                    return buffers.get(i).asSlice(0, bytes);
                }
                free = i;
            }
        }
        // A free buffer too small for this call is replaced (the collector frees it); none free: one more.
        MemorySegment b = Arena.ofAuto().allocate(bytes, 64);
        if (free >= 0) {
            buffers.set(free, b);
            users.set(free, user);
        } else {
            buffers.add(b);
            users.add(user);
        }
        return b;
    }

    /** @return buffers kept (for tests) */
    synchronized int kept() {
        return buffers.size();
    }
}
