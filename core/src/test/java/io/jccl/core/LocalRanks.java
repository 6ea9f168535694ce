package io.jccl.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * {@code n} ranks in this JVM, each a communicator over the real socket transport, and one thread
 * per rank to drive them as separate processes would.
 */
final class LocalRanks implements AutoCloseable {
    /** Bound on any one test step; a hang fails the test instead of stalling the build. */
    static final long STEP_TIMEOUT_SECONDS = 60;

    final int n;
    final Communicator[] comms;
    private final ExecutorService threads;

    LocalRanks(int n) {
        this(n, CommConfig.builder().timeout(Duration.ofSeconds(30)).build());
    }

    LocalRanks(int n, CommConfig config) {
        this(n, n, UniqueId.create(Duration.ofSeconds(30)), config);
    }

    /**
     * Ranks {@code 0 .. local - 1} of a communicator of {@code nranks}, in this JVM; the others
     * join from elsewhere (child processes) with the same id.
     */
    LocalRanks(int local, int nranks, UniqueId id, CommConfig config) {
        this(local, nranks, id, rank -> config);
    }

    /** As above, each rank with its own settings. */
    LocalRanks(int local, int nranks, UniqueId id, java.util.function.IntFunction<CommConfig> configs) {
        this.n = local;
        this.threads = Executors.newFixedThreadPool(local, r -> {
            Thread t = new Thread(r, "test-rank");
            t.setDaemon(true);
            return t;
        });
        List<Communicator> made = run(rank -> Communicator.init(nranks, id, rank, configs.apply(rank)));
        this.comms = made.toArray(new Communicator[0]);
    }

    /** Aborts every rank (never throws, never hangs). */
    void abortAll() {
        for (Communicator c : comms) {
            c.abort();
        }
    }

    /** Runs {@code body} on every rank at once and returns the results by rank; rethrows the first failure. */
    <T> List<T> run(Function<Integer, T> body) {
        List<Future<T>> futures = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            int rank = r;
            futures.add(threads.submit(() -> body.apply(rank)));
        }
        List<T> results = new ArrayList<>();
        for (Future<T> f : futures) {
            try {
                results.add(f.get(STEP_TIMEOUT_SECONDS, TimeUnit.SECONDS));
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException re) {
                    throw re;
                }
                throw new AssertionError(e.getCause());
            } catch (InterruptedException | TimeoutException e) {
                throw new AssertionError("a rank did not finish within " + STEP_TIMEOUT_SECONDS + " s", e);
            }
        }
        return results;
    }

    /** Runs {@code body} on every rank at once; each rank gets its communicator. */
    void each(java.util.function.BiConsumer<Integer, Communicator> body) {
        run(rank -> {
            body.accept(rank, comms[rank]);
            return null;
        });
    }

    @Override
    public void close() {
        try {
            if (comms != null && java.util.Arrays.stream(comms).allMatch(c -> c.asyncError() == null)) {
                run(rank -> {
                    comms[rank].close();
                    return null;
                });
            }
        } finally {
            abortAll();
            threads.shutdownNow();
        }
    }
}
