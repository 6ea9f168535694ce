package io.jccl.tck.internal;

import java.time.Duration;

/** A point in time on {@link System#nanoTime()}'s clock, and how long is left until it. */
public final class Deadline {
    private final long startNanos;
    private final long endNanos;
    private final Duration budget;

    private Deadline(Duration budget) {
        this.budget = budget;
        this.startNanos = System.nanoTime();
        this.endNanos = startNanos + budget.toNanos();
    }

    /** @return a deadline {@code budget} from now */
    public static Deadline after(Duration budget) {
        return new Deadline(budget);
    }

    /** @return whether the deadline has passed */
    public boolean expired() {
        return System.nanoTime() - endNanos >= 0;
    }

    /** @return the time left, zero once expired */
    public Duration remaining() {
        long left = endNanos - System.nanoTime();
        return left <= 0 ? Duration.ZERO : Duration.ofNanos(left);
    }

    /** @return the time since the deadline was set */
    public Duration elapsed() {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /** @return the budget it was set with */
    public Duration budget() {
        return budget;
    }

    /** @return e.g. {@code 1.5 s} or {@code 250 ms} */
    public static String format(Duration d) {
        long ms = d.toMillis();
        return ms >= 10_000 ? ms / 1000 + " s" : ms >= 1000 ? String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0)
                : ms + " ms";
    }
}
