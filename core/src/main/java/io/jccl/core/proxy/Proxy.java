package io.jccl.core.proxy;

import io.jccl.core.JcclException;
import io.jccl.core.collective.Operation;
import io.jccl.core.transport.Connection;
import io.jccl.spi.NetException;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Collection;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntFunction;

/**
 * A communicator's progress thread. Each pass of its duty cycle:
 * <ol>
 * <li>takes newly submitted operations and lets them announce their receives, so that receives
 *     are posted ahead even for operations still queued;</li>
 * <li>moves every connection: posts irecvs into free slots, isends filled slots, tests the
 *     oldest request of each (spec 9.2, 9.3);</li>
 * <li>runs the steps of the operation at the head of the queue (the host kernel: copies and
 *     reductions between user buffers and slots), completing operations in order;</li>
 * <li>on an idle pass, checks that the head operation moved within the timeout.</li>
 * </ol>
 * An idle pass with work in flight goes to the {@link IdleStrategy}; with nothing in flight the
 * thread parks until an operation arrives. Plugin failures fail the communicator, naming the peer
 * of the connection that failed.
 *
 * <p>One thread at a time runs passes (it holds {@link #driver}): the proxy thread, or a caller
 * waiting for its operation ({@link #help}), while the proxy thread parks.
 */
public final class Proxy {
    /** Told when the proxy fails the communicator. */
    @FunctionalInterface
    public interface FailureListener {
        void failed(JcclException cause);
    }

    /** Explains a timeout: asks the other ranks how far they are, to name the one that holds things up. */
    @FunctionalInterface
    public interface TimeoutDiagnosis {
        /**
         * The thread running the duty cycle; may block briefly (bounded), the communicator is failing anyway.
         *
         * @param op           the stuck operation
         * @param blockingPeer the rank this rank's first blocked task waits for, or -1
         * @param localReason  what this rank sees
         * @return the failure to report
         */
        JcclException diagnose(Operation op, int blockingPeer, String localReason);
    }

    private static final long SLEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    /**
     * Idle passes before the thread sleeps with nothing in flight: an application that issues its
     * next operation right after the last completed finds the proxy still awake.
     */
    private static final int PASSES_BEFORE_SLEEP = 2_000;
    /**
     * How long the proxy thread parks at a time while a caller drives. It is woken when the last
     * caller leaves (and by stop and fail), so the bound only caps a wait that nothing needs: each
     * wake-up is a context switch that takes the core from a rank with work (with 1 ms, a thousand
     * a second per rank while callers drive).
     */
    private static final long HELPED_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    /**
     * A helping caller spins this many idle passes, then yields its core to the ranks it waits for
     * (and parks only after a long wait, as the proxy's backoff does).
     */
    private static final int HELPER_SPINS = 16;
    /**
     * Idle passes before the first yield on a host with more ranks than cores: none. There the
     * rank waited for may be off its core, waiting for this one's; and an idle pass over network
     * connections is a read syscall per connection (4 ranks on 2 cores over loopback TCP, 16 passes
     * held the core about 100 us after each message; a 256 KiB all-reduce took 2145-2408 us with
     * them, 1684-2081 without).
     */
    private static final int OVERSUBSCRIBED_HELPER_SPINS = 0;

    private final Thread thread;
    private final ConcurrentLinkedQueue<Operation> submissions = new ConcurrentLinkedQueue<>();
    private final ArrayDeque<Operation> running = new ArrayDeque<>();
    /** The tail of {@link #running} not yet started: a stream-ordered operation waiting for its GPU, and those behind it. */
    private final ArrayDeque<Operation> unstarted = new ArrayDeque<>();
    private final IdleStrategy idle;
    private final long timeoutNanos;
    private final FailureListener listener;
    private final IntFunction<String> describePeer;
    private final NetLogger log;
    private final TimeoutDiagnosis diagnosis;
    /** Held by whoever runs a pass: the proxy thread, or a waiting caller ({@link #help}). */
    private final AtomicBoolean driver = new AtomicBoolean();
    /** Callers inside {@link #help}; while there are any, the proxy thread parks. */
    private final AtomicInteger helpers = new AtomicInteger();
    /** A helping caller's idle strategy: one per thread, so that it allocates nothing per wait. */
    private final ThreadLocal<IdleStrategy> helperIdle;
    private final boolean callerProgress;
    private final Operation.Helper helper = this::help;
    private volatile boolean terminated;
    private volatile Connection[] connections;
    private volatile JcclException failure;
    private volatile boolean stopping;
    private volatile boolean sleeping;
    private int idlePasses;

    /**
     * @param name         the thread's name
     * @param connections  the connections to drive (more may be added)
     * @param timeoutNanos how long the head operation may go without a step before it fails
     * @param describePeer names a rank in messages, e.g. {@code rank 3 (node7 pid 4242)}
     * @param callerProgress whether a caller waiting for an operation runs the duty cycle ({@link #help})
     * @param oversubscribed whether this host has more ranks than cores: a helping caller then yields at its first idle pass
     */
    public Proxy(String name, Collection<Connection> connections, IdleStrategy idle, long timeoutNanos,
                 IntFunction<String> describePeer, NetLogger log, FailureListener listener, TimeoutDiagnosis diagnosis,
                 boolean callerProgress, boolean oversubscribed) {
        this.callerProgress = callerProgress;
        int spins = oversubscribed ? OVERSUBSCRIBED_HELPER_SPINS : HELPER_SPINS;
        this.helperIdle = ThreadLocal.withInitial(() -> new IdleStrategy.Backoff(spins, 100_000, 1_000, 100_000));
        this.diagnosis = diagnosis;
        this.connections = connections.toArray(new Connection[0]);
        this.idle = idle;
        this.timeoutNanos = timeoutNanos;
        this.describePeer = describePeer;
        this.log = log;
        this.listener = listener;
        this.thread = new Thread(this::run, name);
        thread.setDaemon(true);
    }

    /** Starts the thread. */
    public void start() {
        thread.start();
    }

    /** Queues an operation; it runs after every operation submitted before it. Any thread. */
    public void submit(Operation op) {
        JcclException f = failure;
        if (f != null) {
            op.fail(f);
            return;
        }
        op.setHelper(helper);
        submissions.offer(op);
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    /** Adds connections made after start (send/recv peers). Any thread. */
    public synchronized void addConnections(Collection<? extends Connection> more) {
        Connection[] now = connections;
        Connection[] next = Arrays.copyOf(now, now.length + more.size());
        int i = now.length;
        for (Connection c : more) {
            next[i++] = c;
        }
        connections = next;
    }

    /** @return the progress thread, which touches user buffers */
    public Thread thread() {
        return thread;
    }

    /** @return every connection the proxy drives */
    public Connection[] connections() {
        return connections;
    }

    /** Fails every pending and future operation with {@code cause} (the first failure sticks). Any thread. */
    public void fail(JcclException cause) {
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = cause;
        }
        LockSupport.unpark(thread);
    }

    /** @return the failure, or {@code null} */
    public JcclException failure() {
        return failure;
    }

    /**
     * Stops the thread and waits for it.
     *
     * @return whether it stopped within {@code timeoutNanos} (if not, its connections must not be closed)
     */
    public boolean stop(long timeoutNanos) {
        stopping = true;
        LockSupport.unpark(thread);
        if (Thread.currentThread() == thread) {
            return false;
        }
        try {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return !thread.isAlive();
    }

    private void run() {
        try {
            while (!stopping) {
                if (helpers.get() > 0) {
                    // A waiting caller runs the duty cycle: stay out of its way (and off its core).
                    LockSupport.parkNanos(this, HELPED_PARK_NANOS);
                    continue;
                }
                if (!driver.compareAndSet(false, true)) {
                    Thread.onSpinWait();
                    continue;
                }
                int work;
                try {
                    work = pass();
                } finally {
                    driver.set(false);
                }
                if (failure != null) {
                    sleep();
                } else if (work > 0) {
                    idle.reset();
                    idlePasses = 0;
                } else if (++idlePasses > PASSES_BEFORE_SLEEP && running.isEmpty() && submissions.isEmpty()
                        && drained()) {
                    sleep();
                } else {
                    idle.idle(0);
                }
            }
        } finally {
            while (!driver.compareAndSet(false, true)) {
                Thread.yield();
            }
            try {
                terminated = true;
                JcclException f = failure != null ? failure
                        : new JcclException(NetResult.INVALID_USAGE, "the communicator was closed");
                failPending(f);
            } finally {
                driver.set(false);
            }
        }
    }

    /**
     * One pass of the duty cycle, by the proxy thread or a helping caller, holding {@link #driver}.
     *
     * @return work done; 0 for an idle pass
     */
    private int pass() {
        JcclException f = failure;
        if (f != null) {
            failPending(f);
            return 0;
        }
        long now = System.nanoTime();
        try {
            int work = acceptSubmissions(now);
            work += moveNetwork();
            int steps = runOperations(now);
            if (steps > 0) {
                // Send what the steps just filled now, not a pass later: a pass per hop saved.
                work += steps + moveNetwork();
            } else if (work == 0) {
                checkProgress(now);
            }
            return work;
        } catch (JcclException e) {
            failFromProxy(e);
            failPending(failure);
            return 1;
        } catch (RuntimeException | Error e) {
            failFromProxy(new JcclException(NetResult.INTERNAL_ERROR, JcclException.NO_RANK,
                    "the proxy failed: " + e, e));
            failPending(failure);
            if (e instanceof Error err && !(e instanceof StackOverflowError)) {
                throw err;
            }
            return 1;
        }
    }

    /**
     * Lets the thread that waits for {@code op} run the duty cycle itself until {@code op} ends
     * or {@code deadlineNanos} passes, while the proxy thread parks. Each rank then keeps one busy
     * thread instead of two, and no step waits for a thread switch: on a machine with fewer
     * cores than busy threads, that is most of a small operation's time. Other operations
     * progress too, in order, as on the proxy thread; the thread takes over again when the
     * caller leaves.
     *
     * @return whether {@code op} ended; {@code false} when the deadline passed or the proxy is
     *         stopping (the caller then waits as usual)
     */
    public boolean help(Operation op, long deadlineNanos) {
        if (!callerProgress || Thread.currentThread() == thread) {
            return op.isDone();
        }
        helpers.incrementAndGet();
        IdleStrategy wait = helperIdle.get();
        try {
            wait.reset();
            while (!op.isDone()) {
                if (stopping || terminated || System.nanoTime() - deadlineNanos > 0) {
                    return op.isDone();
                }
                int work = 0;
                if (driver.compareAndSet(false, true)) {
                    try {
                        if (!terminated) {
                            work = pass();
                        }
                    } finally {
                        driver.set(false);
                    }
                }
                wait.idle(work);
            }
            return true;
        } finally {
            if (helpers.decrementAndGet() == 0) {
                LockSupport.unpark(thread);
            }
        }
    }

    private int acceptSubmissions(long now) {
        int work = 0;
        // Operations start in order: behind a stream-ordered one that waits for its GPU, none does.
        while (!unstarted.isEmpty()) {
            Operation first = unstarted.peekFirst();
            first.start(now);
            if (!first.started()) {
                break;
            }
            unstarted.pollFirst();
            work++;
        }
        Operation op;
        while ((op = submissions.poll()) != null) {
            running.addLast(op); // first: if starting throws, the failure reaches it
            if (unstarted.isEmpty()) {
                op.start(now);
            }
            if (!op.started()) {
                unstarted.addLast(op);
            }
            work++;
        }
        return work;
    }

    private int moveNetwork() {
        int work = 0;
        for (Connection c : connections) {
            try {
                work += c.progress();
            } catch (NetException e) {
                throw new JcclException(e.result() == NetResult.SUCCESS ? NetResult.SYSTEM_ERROR : e.result(), c.peer,
                        describePeer.apply(c.peer) + ": " + c.name + " failed: " + e.getMessage(), e);
            }
        }
        return work;
    }

    private int runOperations(long now) {
        int work = 0;
        while (!running.isEmpty()) {
            Operation op = running.peekFirst();
            work += op.progress(now);
            if (!op.finished()) {
                break;
            }
            running.pollFirst();
            op.succeed();
            work++;
            Operation next = running.peekFirst();
            if (next != null) {
                next.markProgress(now);
            }
        }
        return work;
    }

    /** @return whether no connection has a message in flight (the transport moves data only while tested) */
    private boolean drained() {
        for (Connection c : connections) {
            if (!c.drained()) {
                return false;
            }
        }
        return true;
    }

    private void checkProgress(long now) {
        Operation head = running.peekFirst();
        if (head != null && now - head.lastProgressNanos() > timeoutNanos) {
            int peer = head.blockingPeer();
            String local = head.describe() + " made no progress for "
                    + TimeUnit.NANOSECONDS.toMillis(now - head.lastProgressNanos()) + " ms: waiting for "
                    + head.waitingFor() + (peer >= 0 ? " (" + describePeer.apply(peer) + ")" : "");
            throw diagnosis.diagnose(head, peer, local);
        }
    }

    private void failFromProxy(JcclException e) {
        boolean first;
        synchronized (this) {
            first = failure == null;
            if (first) {
                failure = e;
            }
        }
        if (first) {
            log.warn("Proxy: %s", e.getMessage());
            listener.failed(e);
        }
    }

    private void failPending(JcclException f) {
        unstarted.clear();
        Operation op;
        while ((op = running.pollFirst()) != null) {
            op.fail(f);
        }
        while ((op = submissions.poll()) != null) {
            op.fail(f);
        }
    }

    private void sleep() {
        sleeping = true;
        if (submissions.isEmpty() && !stopping) {
            LockSupport.parkNanos(this, SLEEP_NANOS);
        }
        sleeping = false;
        idle.reset();
    }

    /** @return e.g. for logs: the proxy's thread name and queue depth */
    @Override
    public String toString() {
        return thread.getName() + "[" + running.size() + " running]";
    }
}
