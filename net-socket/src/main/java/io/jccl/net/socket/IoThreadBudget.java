package io.jccl.net.socket;

/**
 * The I/O threads of all of a process's JcclSocket comms, bounded together when the layout is
 * automatic. An I/O thread polls before it blocks, so threads beyond the cores take scheduler
 * slices from the ones with bytes to move: a ring of 2 channels opens 4 comms per rank, which at 4
 * threads each put 32 polling threads of two ranks on a 16-core host, and messages then waited
 * whole slices (device all-reduce through the network FIFO, H200: 0.7 to 0.9 ms a call at random
 * sizes with 4 threads per comm, rarely with 1, never with none). Each comm gets a fair share of
 * the budget when it is made, at least one thread (its streams need one), at most what its layout
 * asks for; the streams themselves are the ones both ends agreed on, so this is a local choice only.
 */
final class IoThreadBudget {
    private final int limit;
    private int comms;

    /** @param limit I/O threads of all comms together, or 0 for no bound (NCCL_SOCKET_NTHREADS set) */
    IoThreadBudget(int limit) {
        this.limit = limit;
    }

    /**
     * Counts a new comm.
     *
     * @param wanted the threads its layout asks for (at least 1)
     * @return the threads it may start
     */
    synchronized int reserve(int wanted) {
        comms++;
        if (limit == 0) {
            return wanted;
        }
        return Math.max(1, Math.min(wanted, limit / comms));
    }

    /** A comm that reserved threads closed. */
    synchronized void release() {
        comms = Math.max(0, comms - 1);
    }
}
