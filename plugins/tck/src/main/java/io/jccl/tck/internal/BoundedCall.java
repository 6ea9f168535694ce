package io.jccl.tck.internal;

import io.jccl.spi.NetException;

import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Runs a transport call that must not block on a helper thread, and fails the rule with the
 * blocked thread's stack if it does not return within its bound. A call that never returns leaves
 * its (daemon, interrupted) thread behind, and the kit carries on with the next rule.
 *
 * <p>Only setup calls go through here; the data path is timed in place ({@link TimedCalls}).
 */
public final class BoundedCall {
    private static final AtomicInteger THREADS = new AtomicInteger();

    private BoundedCall() {
    }

    /** A transport call that returns a value. */
    @FunctionalInterface
    public interface Call<T> {
        T call() throws Exception;
    }

    private record Outcome(Object value, Throwable failure) {
    }

    /**
     * @param what  the call, as a failure message names it, e.g. {@code connect(dev 0)}
     * @param bound how long it may take
     * @param why   what the spec says, appended to the failure message
     * @return the call's result
     * @throws NetException whatever the call threw
     */
    @SuppressWarnings("unchecked")
    public static <T> T call(String what, Duration bound, String why, Call<T> call) throws NetException {
        BlockingQueue<Outcome> result = new ArrayBlockingQueue<>(1);
        Thread t = new Thread(() -> {
            Outcome o;
            try {
                o = new Outcome(call.call(), null);
            } catch (Throwable e) {
                o = new Outcome(null, e);
            }
            result.add(o);
        }, "jccl-tck-call-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        t.start();
        Outcome o;
        try {
            o = result.poll(bound.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            t.interrupt();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + what, e);
        }
        if (o == null) {
            String stack = Threads.stackOf(t);
            t.interrupt();
            fail(what + " did not return within " + Deadline.format(bound) + ": " + why
                    + "\nThe call is blocked at:\n" + stack);
        }
        if (o.failure != null) {
            switch (o.failure) {
                case NetException e -> throw e;
                case RuntimeException e -> throw e;
                case Error e -> throw e;
                default -> throw new IllegalStateException(what + " threw " + o.failure, o.failure);
            }
        }
        return (T) o.value;
    }
}
