package io.jccl.tck.internal.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.ListenComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetRequest;
import io.jccl.tck.TckSettings;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.BoundedCall;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.Threads;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Everything a CollNet rule works with: the transport under test, the settings, and groups of 2
 * to 4 ranks in this JVM, one thread per rank (each rank is a proxy thread of its own
 * communicator, all sharing the one transport instance, as ranks of one process do under NCCL).
 */
public final class CollKit {
    /** The device every rank uses. */
    public static final int DEV = 0;

    private final CollNetPlugin plugin;
    private final TckSettings settings;

    public CollKit(CollNetPlugin plugin, TckSettings settings) {
        this.plugin = plugin;
        this.settings = settings;
    }

    public CollNetPlugin plugin() {
        return plugin;
    }

    public TckSettings settings() {
        return settings;
    }

    /** Work one rank does, on its own thread. */
    @FunctionalInterface
    public interface RankWork {
        void run(int rank) throws Exception;
    }

    /**
     * Runs {@code work} for every rank at once and waits for all; fails the rule with the first
     * failure (naming its rank), or with the stacks of ranks still running after {@code limit}.
     */
    public void onEveryRank(int nranks, Duration limit, RankWork work) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicReference<Integer> failedRank = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < nranks; r++) {
            int rank = r;
            Thread t = new Thread(() -> {
                try {
                    work.run(rank);
                } catch (Throwable e) {
                    if (failure.compareAndSet(null, e)) {
                        failedRank.set(rank);
                    }
                }
            }, "jccl-tck-rank-" + rank + "-of-" + nranks);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        Deadline d = Deadline.after(limit);
        for (Thread t : threads) {
            t.join(Math.max(1, d.remaining().toMillis()));
            if (t.isAlive()) {
                StringBuilder stacks = new StringBuilder();
                for (Thread s : threads) {
                    if (s.isAlive()) {
                        stacks.append(Threads.stackOf(s));
                    }
                }
                threads.forEach(Thread::interrupt);
                Throwable f = failure.get();
                fail("ranks of a " + nranks + "-rank group did not finish within " + Deadline.format(limit)
                        + (f == null ? "" : " (rank " + failedRank.get() + " failed first: " + f + ")")
                        + ":\n" + stacks, f);
            }
        }
        Throwable f = failure.get();
        if (f != null) {
            if (f instanceof AssertionError a) {
                throw new AssertionError("rank " + failedRank.get() + " of " + nranks + ": " + a.getMessage(), a);
            }
            throw new AssertionError("rank " + failedRank.get() + " of " + nranks + " threw " + f, f);
        }
    }

    /**
     * Connects a group: every rank listens, the handles are exchanged, every rank calls the
     * blocking, collective {@code connect} at once, then {@code closeListen}.
     *
     * @return the comms, indexed by rank
     */
    public CollComm[] connect(int nranks) throws Exception {
        NetHandle[] handles = new NetHandle[nranks];
        ListenComm[] listens = new ListenComm[nranks];
        for (int r = 0; r < nranks; r++) {
            NetHandle h = NetHandle.allocate();
            handles[r] = h;
            listens[r] = BoundedCall.call("CollNet listen (rank " + r + ")", settings.callBound(),
                    "listen must not block", () -> plugin.listen(DEV, h));
            if (listens[r] == null) {
                fail("CollNet listen returned null: it must return a listen comm or throw");
            }
        }
        CollComm[] comms = new CollComm[nranks];
        onEveryRank(nranks, settings.connectTimeout(), rank -> {
            NetHandle[] mine = new NetHandle[nranks];
            for (int i = 0; i < nranks; i++) {
                mine[i] = handles[i].copy();
            }
            comms[rank] = plugin.connect(mine, rank, listens[rank]);
            if (comms[rank] == null) {
                fail("CollNet connect returned null: it blocks until the group is connected, then returns the comm");
            }
            plugin.closeListen(listens[rank]);
        });
        return comms;
    }

    /** Closes every comm of a group; the first failure is thrown after trying all. */
    public void close(CollComm[] comms) throws NetException {
        NetException first = null;
        for (CollComm c : comms) {
            if (c == null) {
                continue;
            }
            try {
                plugin.closeColl(c);
            } catch (NetException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /**
     * Polls a CollNet request until done; fails the rule if nothing happens for the completion
     * timeout. A NetException from test propagates.
     *
     * @param size receives the bytes produced, or {@code null}
     */
    public void await(NetRequest request, int[] size, String what) throws NetException {
        Deadline d = Deadline.after(settings.completionTimeout());
        Backoff idle = new Backoff();
        while (true) {
            long t = System.nanoTime();
            boolean done = plugin.test(request, size);
            checkDuration("test", t);
            if (done) {
                return;
            }
            if (d.expired()) {
                fail(what + " did not complete within " + Deadline.format(d.budget()));
            }
            idle.idle();
        }
    }

    /** Fails the rule if a data-path call took longer than the call bound. */
    public void checkDuration(String call, long startNanos) {
        long took = System.nanoTime() - startNanos;
        if (took > settings.callBound().toNanos()) {
            fail(call + " took " + Deadline.format(Duration.ofNanos(took)) + ": CollNet data-path calls must never "
                    + "block");
        }
    }
}
