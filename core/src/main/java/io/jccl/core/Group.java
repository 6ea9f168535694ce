package io.jccl.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * NCCL's group semantics ({@code ncclGroupStart} / {@code ncclGroupEnd}) for the calling thread:
 * operations issued between {@link #start()} and {@link #close()} are held back and, when the
 * outermost group ends, launched together, one operation per communicator. Their sends and
 * receives all progress at once, so grouped point-to-point patterns cannot deadlock, whatever the
 * call order; collectives of a group run in call order.
 *
 * <pre>{@code
 * try (Group g = Group.start()) {
 *     comm.sendAsync(out, n, DataType.FLOAT32, next);
 *     comm.recvAsync(in, n, DataType.FLOAT32, prev);
 * }   // both are in flight here; await either handle, or issue more work
 * }</pre>
 *
 * <p>Calls inside a group return the group's handle for their communicator: it completes when
 * all of that communicator's grouped operations have. Blocking calls are refused inside a group.
 * Groups nest; only the outermost end launches.
 *
 * <p>Stream-ordered calls on device buffers group too: each queues the copy of its input on its
 * stream when made; at the group's end the whole group waits for the stream once, runs as one
 * operation, and its outputs are copied back on the stream after it. One communicator's part of a
 * group is either host calls or stream-ordered calls on one stream (anything else is refused at the
 * call); grouped device collectives take the staged path, not the P2P ring or the network FIFO.
 */
public final class Group implements AutoCloseable {
    private static final ThreadLocal<State> STATE = ThreadLocal.withInitial(State::new);

    private static final class State {
        int depth;
        final Map<Communicator, PendingGroup> pending = new LinkedHashMap<>();
    }

    private boolean ended;

    private Group() {
    }

    /** Starts (or nests) a group on this thread. */
    public static Group start() {
        STATE.get().depth++;
        return new Group();
    }

    /**
     * Ends this group; the outermost end launches every held-back operation.
     *
     * @throws JcclException if launching failed for some communicator (the others were launched)
     */
    @Override
    public void close() {
        if (ended) {
            return;
        }
        ended = true;
        State s = STATE.get();
        if (s.depth == 0) {
            throw JcclException.invalidUsage("group ended more often than started");
        }
        if (--s.depth > 0) {
            return;
        }
        List<PendingGroup> groups = new ArrayList<>(s.pending.values());
        s.pending.clear();
        RuntimeException first = null;
        for (PendingGroup g : groups) {
            try {
                g.launch();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** @return whether the calling thread is inside a group */
    public static boolean isActive() {
        return STATE.get().depth > 0;
    }

    /** @return the held-back work of {@code comm} in this thread's group, created on first use */
    static PendingGroup pendingFor(Communicator comm) {
        return STATE.get().pending.computeIfAbsent(comm, Communicator::newPendingGroup);
    }
}
