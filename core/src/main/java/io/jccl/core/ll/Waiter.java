package io.jccl.core.ll;

import io.jccl.core.JcclException;

import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The calling thread's wait for other ranks during a small operation: it spins first (a peer on
 * another core answers within a cache-line transfer), then yields (on a machine with fewer cores
 * than ranks, the rank it waits for needs this core), and parks briefly only after a long wait.
 * Every idle round checks the communicator's failure, and the operation's deadline bounds the
 * whole wait. One per communicator; allocates nothing.
 */
final class Waiter {
    /**
     * Spins before the first yield when every rank of this host can have a core of its own: a
     * peer that runs answers within a few; one whose core a JIT or GC thread took needs this core
     * given up soon (a spin is a PAUSE, tens of nanoseconds).
     */
    static final int SPINS = 64;
    /**
     * Idle rounds before the first yield when this host has more ranks than cores: one, so the
     * core goes at once to the rank waited for. Over the network each idle round is a read
     * syscall that finds nothing: with 4 (3 polls, then a yield) 4 ranks through TCP on 2 cores made
     * 7.4 reads per rank and 8-byte all-reduce, with 1 they make 3.7, and the same algorithm in C
     * 3.2 (perf stat, bench/mpi/README.md).
     */
    static final int OVERSUBSCRIBED_SPINS = 1;
    private static final long YIELD_NANOS = 2_000_000;
    private static final long PARK_NANOS = 50_000;

    private final Supplier<JcclException> failure;
    private final LowLatencyPath.Diagnosis diagnosis;
    private final long timeoutNanos;
    private final int spins;
    private String operation;
    private long sequence;
    private long started;
    private int rounds;
    /** Yields and parks so far, for tests. */
    private long giveUps;

    /** @param oversubscribed whether this host has more of the communicator's ranks than cores they run on */
    Waiter(Supplier<JcclException> failure, LowLatencyPath.Diagnosis diagnosis, long timeoutNanos, boolean oversubscribed) {
        this.spins = oversubscribed ? OVERSUBSCRIBED_SPINS : SPINS;
        this.failure = failure;
        this.diagnosis = diagnosis;
        this.timeoutNanos = timeoutNanos;
    }

    /** Starts the waits of one operation. */
    void begin(String operationName, long sequenceNumber) {
        this.operation = operationName;
        this.sequence = sequenceNumber;
        this.started = 0;
        this.rounds = 0;
    }

    /** Something arrived: the next wait starts with spinning again. */
    void progressed() {
        rounds = 0;
    }

    /**
     * One idle round while waiting for {@code peer}.
     *
     * @param waitingFor what is awaited, a constant (e.g. {@code "the contribution"}), for the timeout's message
     *
     * @throws JcclException the communicator's failure, or a timeout naming the rank to blame
     */
    void idle(int peer, String waitingFor) {
        JcclException f = failure.get();
        if (f != null) {
            throw new JcclException(f.result(), f.failedRank(), operation + " #" + sequence + " failed: "
                    + f.getMessage(), f);
        }
        if (++rounds < spins) {
            Thread.onSpinWait();
            return;
        }
        long now = System.nanoTime();
        if (started == 0) {
            started = now;
        }
        long waited = now - started;
        if (waited > timeoutNanos) {
            String op = operation + " #" + sequence;
            throw diagnosis.timedOut(sequence, op, peer, op + " made no progress for " + waited / 1_000_000
                    + " ms (JCCL_TIMEOUT_MS) waiting for " + waitingFor + " (rank " + peer + ")");
        }
        giveUps++;
        if (waited < YIELD_NANOS) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(PARK_NANOS);
        }
    }

    /** @return the idle rounds so far that gave the core up (a yield or a park), for tests */
    long giveUps() {
        return giveUps;
    }
}
