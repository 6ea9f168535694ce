package io.jccl.core.collective;

import io.jccl.core.Completion;
import io.jccl.core.JcclException;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * One operation of a communicator: a collective, or all the sends and receives of one group. Its
 * {@link Task}s progress on the proxy thread; the issuing thread holds it as a {@link Completion}.
 */
public final class Operation implements Completion {
    private static final int RUNNING = 0;
    private static final int SUCCEEDED = 1;
    private static final int FAILED = 2;
    /**
     * A waiter spins briefly, then yields (so that on few cores the proxy that does the work gets
     * the core), then parks until the proxy wakes it.
     */
    private static final int SPINS = 100;
    private static final int YIELDS = 200;

    private String name;
    private Task[] tasks;
    private long sequence;
    private int remaining;
    private long lastProgressNanos;
    private volatile boolean submitted;
    private volatile int state = RUNNING;
    private volatile JcclException error;
    private volatile Thread waiter;
    private volatile Helper helper;
    /** For a stream-ordered operation: its input is ready only when the GPU stream says so. */
    private StreamGate gate;
    private boolean started;
    private final AtomicBoolean gateReleased = new AtomicBoolean();

    /** Runs the proxy's duty cycle on the waiting thread (the proxy's {@code help}). */
    @FunctionalInterface
    public interface Helper {
        /** @return whether the operation ended before {@code deadlineNanos} (a {@link System#nanoTime()} value) */
        boolean help(Operation op, long deadlineNanos);
    }

    /**
     * @param name  for messages
     * @param tasks the parts; none for an operation with nothing to move (count 0)
     */
    public Operation(String name, Task... tasks) {
        this.name = name;
        this.tasks = tasks;
    }

    /** Sets the name and parts of an operation whose group just ended; before it is submitted. */
    public void setTasks(String operationName, Task... parts) {
        if (submitted) {
            throw new IllegalStateException(name + " is already submitted");
        }
        this.name = operationName;
        this.tasks = parts;
    }

    /** @return for messages, e.g. {@code allReduce} */
    public String name() {
        return name;
    }

    /** The issuing thread handed it to the proxy (at once, or when its group ended). */
    public void markSubmitted(long sequenceNumber) {
        this.sequence = sequenceNumber;
        this.submitted = true;
    }

    /**
     * Makes the operation wait for {@code streamGate} before it starts (before it announces a
     * receive or reads an input), and release it when it ends; before it is submitted.
     */
    public void setGate(StreamGate streamGate) {
        if (submitted) {
            throw new IllegalStateException(name + " is already submitted");
        }
        this.gate = streamGate;
    }

    /** The proxy it was submitted to, which a waiting caller may help. */
    public void setHelper(Helper proxyHelper) {
        this.helper = proxyHelper;
    }

    /** @return its place in the communicator's order of operations, from 1 */
    public long sequence() {
        return sequence;
    }

    /** @return e.g. {@code allReduce #12} */
    public String describe() {
        return name + " #" + sequence;
    }

    // ---- Proxy thread

    /**
     * Announces the receives of every task; the operation is now the proxy's. A stream-ordered
     * operation whose gate is still closed does not start: the proxy calls again (and starts the
     * operations behind it only after it, so that receives are announced in order).
     */
    public void start(long nowNanos) {
        lastProgressNanos = nowNanos;
        if (started) {
            return;
        }
        if (gate != null && !gate.isOpen()) {
            remaining = -1; // not finished
            return;
        }
        started = true;
        remaining = 0;
        for (Task t : tasks) {
            t.start();
            if (!t.done) {
                remaining++;
            }
        }
    }

    /** @return whether it has started (a stream-ordered one waits for its gate) */
    public boolean started() {
        return started;
    }

    /**
     * @return steps moved in this pass; 0 when the operation waits for peers
     * @throws JcclException if a task finds the peers disagree
     */
    public int progress(long nowNanos) {
        if (!started) {
            start(nowNanos); // waiting for the GPU is not a stall: the clock restarts
            if (!started) {
                return 0;
            }
        }
        int work = 0;
        for (Task t : tasks) {
            if (!t.done) {
                work += t.progress();
                if (t.done) {
                    remaining--;
                }
            }
        }
        if (work > 0) {
            lastProgressNanos = nowNanos;
        }
        return work;
    }

    /** @return whether every task finished */
    public boolean finished() {
        return remaining == 0;
    }

    /** @return when a step last moved */
    public long lastProgressNanos() {
        return lastProgressNanos;
    }

    /** The operation became the head of the queue: its progress clock starts now. */
    public void markProgress(long nowNanos) {
        lastProgressNanos = nowNanos;
    }

    /** @return the rank the first blocked task waits for, or -1 */
    public int blockingPeer() {
        for (Task t : tasks) {
            if (!t.done && t.blockingPeer() >= 0) {
                return t.blockingPeer();
            }
        }
        return -1;
    }

    /** @return what the first unfinished task waits for */
    public String waitingFor() {
        for (Task t : tasks) {
            if (!t.done) {
                return t.waitingFor();
            }
        }
        return "nothing";
    }

    /** The JFR event of this operation, ended when it ends; {@code null} when none is recorded. */
    private volatile io.jccl.core.observe.CollectiveEvent event;

    /** @param e the operation's started JFR event, or {@code null} */
    public void setEvent(io.jccl.core.observe.CollectiveEvent e) {
        this.event = e;
    }

    private void endEvent(boolean failed) {
        io.jccl.core.observe.CollectiveEvent e = event;
        if (e != null) {
            event = null;
            io.jccl.core.observe.Events.end(e, failed);
        }
    }

    /** Marks success and wakes the waiter. */
    public void succeed() {
        endEvent(false);
        state = SUCCEEDED;
        releaseGate();
        wake();
    }

    /** Marks failure (the first one sticks) and wakes the waiter. */
    public void fail(JcclException cause) {
        if (state == RUNNING) {
            endEvent(true);
            error = cause;
            state = FAILED;
            releaseGate();
            wake();
        }
    }

    /** Lets a stream-ordered operation's GPU stream go on, once, whatever the outcome. */
    private void releaseGate() {
        StreamGate g = gate;
        if (g != null && gateReleased.compareAndSet(false, true)) {
            g.release(state == SUCCEEDED);
        }
    }

    private void wake() {
        Thread w = waiter;
        if (w != null) {
            LockSupport.unpark(w);
        }
    }

    // ---- Issuing thread

    @Override
    public boolean isDone() {
        return state != RUNNING;
    }

    @Override
    public void await() {
        await(Long.MAX_VALUE);
    }

    @Override
    public boolean await(Duration timeout) {
        return await(Math.max(0, timeout.toNanos()));
    }

    private boolean await(long timeoutNanos) {
        if (!submitted) {
            throw JcclException.invalidUsage(name + " was issued inside a group that has not ended: end the group "
                    + "before waiting for its operations");
        }
        long start = System.nanoTime();
        Helper h = helper;
        if (h != null && state == RUNNING) {
            h.help(this, start + timeoutNanos);
        }
        for (int spins = 0; state == RUNNING && spins < SPINS; spins++) {
            Thread.onSpinWait();
        }
        for (int yields = 0; state == RUNNING && yields < YIELDS; yields++) {
            Thread.yield();
        }
        while (state == RUNNING) {
            long left = timeoutNanos - (System.nanoTime() - start);
            if (left <= 0) {
                return false;
            }
            waiter = Thread.currentThread();
            if (state == RUNNING) {
                LockSupport.parkNanos(this, Math.min(left, TimeUnit.MILLISECONDS.toNanos(100)));
            }
            waiter = null;
        }
        if (state == FAILED) {
            JcclException e = error;
            throw new JcclException(e.result(), e.failedRank(), describe() + " failed: " + e.getMessage(), e);
        }
        return true;
    }

    @Override
    public JcclException error() {
        return state == FAILED ? error : null;
    }

    @Override
    public String toString() {
        return describe() + (state == RUNNING ? " (running)" : state == SUCCEEDED ? " (done)" : " (failed)");
    }
}
