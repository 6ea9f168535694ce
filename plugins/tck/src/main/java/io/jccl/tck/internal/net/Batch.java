package io.jccl.tck.internal.net;

import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.Deadline;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A few data-path operations driven together on one thread, as NCCL's proxy drives a connection:
 * each pass posts the operations not yet posted, in the order they were added, stopping at the
 * first that would block (a {@code null} request; retried next pass), then tests every posted
 * one. Records, per operation, whether it completed (and the sizes test reported) or failed (and
 * the exception).
 */
public final class Batch {
    /** Where an operation stands. */
    public enum State { UNPOSTED, PENDING, DONE, FAILED }

    private final NetKit kit;
    private final List<Op> ops = new ArrayList<>();

    private static final class Op {
        final String what;
        final NetKit.PostCall post;
        final int[] sizes;
        NetRequest request;
        State state = State.UNPOSTED;
        NetException error;
        int nullPosts;

        Op(String what, NetKit.PostCall post, int[] sizes) {
            this.what = what;
            this.post = post;
            this.sizes = sizes;
        }
    }

    Batch(NetKit kit) {
        this.kit = kit;
    }

    /**
     * @param what  names the operation in failure messages, e.g. {@code isend of message 2}
     * @param post  the isend, irecv or iflush call
     * @param sizes the array handed to test (one entry per buffer), or {@code null}
     * @return the operation's index
     */
    public int add(String what, NetKit.PostCall post, int[] sizes) {
        ops.add(new Op(what, post, sizes));
        return ops.size() - 1;
    }

    /** Adds an operation already posted. */
    public int addPosted(String what, NetRequest request, int[] sizes) {
        Op op = new Op(what, null, sizes);
        op.request = request;
        op.state = State.PENDING;
        ops.add(op);
        return ops.size() - 1;
    }

    public State state(int i) {
        return ops.get(i).state;
    }

    public NetException error(int i) {
        return ops.get(i).error;
    }

    public int[] sizes(int i) {
        return ops.get(i).sizes;
    }

    /** @return the request of a posted operation, to hand on to another batch */
    public NetRequest requestOf(int i) {
        return ops.get(i).request;
    }

    public String what(int i) {
        return ops.get(i).what;
    }

    /** @return how often posting operation {@code i} returned null (would block) */
    public int nullPosts(int i) {
        return ops.get(i).nullPosts;
    }

    public int size() {
        return ops.size();
    }

    /** @return whether every operation is done or failed */
    public boolean finished() {
        return ops.stream().allMatch(o -> o.state == State.DONE || o.state == State.FAILED);
    }

    /** One pass: post what can be posted, test what is pending. @return whether anything changed */
    public boolean pass() throws NetException {
        boolean progress = false;
        for (Op op : ops) {
            if (op.state != State.UNPOSTED) {
                continue;
            }
            try {
                op.request = op.post.post();
            } catch (NetException e) {
                op.state = State.FAILED;
                op.error = e;
                progress = true;
                continue;
            }
            if (op.request == null) {
                op.nullPosts++;
                break;
            }
            op.state = State.PENDING;
            progress = true;
        }
        for (Op op : ops) {
            if (op.state != State.PENDING) {
                continue;
            }
            if (op.sizes != null) {
                Arrays.fill(op.sizes, -1);
            }
            try {
                if (kit.test(op.request, op.sizes)) {
                    op.state = State.DONE;
                    progress = true;
                }
            } catch (NetException e) {
                op.state = State.FAILED;
                op.error = e;
                progress = true;
            }
        }
        return progress;
    }

    /**
     * Runs until every operation finished; fails the rule if any failed, or if nothing changed for
     * the completion timeout.
     */
    public void run() throws NetException {
        runAllowingFailures(kit.settings().completionTimeout());
        for (Op op : ops) {
            if (op.state == State.FAILED) {
                throw new AssertionError(op.what + " failed: " + op.error, op.error);
            }
        }
    }

    /**
     * Runs until every operation finished, failed ones included; fails the rule if nothing changed
     * for {@code stall}.
     */
    public void runAllowingFailures(Duration stall) throws NetException {
        Backoff idle = new Backoff();
        long last = System.nanoTime();
        while (!finished()) {
            boolean progress = pass();
            if (progress) {
                last = System.nanoTime();
            } else if (System.nanoTime() - last > stall.toNanos()) {
                fail("nothing completed for " + Deadline.format(stall) + "; " + describeOpen());
            }
            idle.after(progress);
        }
    }

    /** Runs until every operation finished or {@code deadline} passed, whichever comes first. */
    public void runUntil(Deadline deadline) throws NetException {
        Backoff idle = new Backoff();
        while (!finished() && !deadline.expired()) {
            idle.after(pass());
        }
    }

    /** @return the operations not finished, for failure messages */
    public String describeOpen() {
        StringBuilder sb = new StringBuilder();
        for (Op op : ops) {
            if (op.state == State.PENDING || op.state == State.UNPOSTED) {
                sb.append(sb.length() == 0 ? "" : "; ").append(op.what)
                        .append(op.state == State.PENDING ? " pending" : " would block (null) " + op.nullPosts + " times");
            }
        }
        return sb.length() == 0 ? "nothing open" : sb.toString();
    }
}
