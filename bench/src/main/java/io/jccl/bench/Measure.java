package io.jccl.bench;

import java.util.Arrays;

/** Small helpers shared by the benchmarks. */
final class Measure {
    private Measure() {
    }

    /** @return messages to send so that a run moves about {@code totalBytes}, at least {@code min} */
    static long messages(long size, long totalBytes, long min) {
        return Math.max(min, totalBytes / Math.max(1, size));
    }

    static double gbPerSecond(long bytes, long nanos) {
        return bytes / (double) nanos;
    }

    /** @return the median of the samples, in the samples' unit */
    static double median(long[] samples) {
        long[] s = samples.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }

    /** Runs {@code task} on a named thread and returns it started. */
    static Thread start(String name, ThrowingRunnable task, Throwable[] failure) {
        Thread t = new Thread(() -> {
            try {
                task.run();
            } catch (Throwable e) {
                synchronized (failure) {
                    if (failure[0] == null) {
                        failure[0] = e;
                    }
                }
            }
        }, name);
        t.start();
        return t;
    }

    static void join(Throwable[] failure, Thread... threads) throws Exception {
        for (Thread t : threads) {
            t.join();
        }
        if (failure[0] instanceof Exception e) {
            throw e;
        }
        if (failure[0] != null) {
            throw new IllegalStateException(failure[0]);
        }
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
