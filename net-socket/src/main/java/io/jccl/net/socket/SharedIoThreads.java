package io.jccl.net.socket;

import java.util.Arrays;

/**
 * The plugin's shared I/O threads ({@code JCCL_SOCKET_SHARED_IO}): a fixed set of
 * {@link StreamWorker}s that serve the data streams of every comm, instead of threads of each comm's
 * own. Under NCCL a rank opens a comm per channel and direction, 16 with 8 channels, and with a
 * thread each two ranks put 32 I/O threads on a 16-core host besides NCCL's own, so a chunk's
 * thread often had to wait for a core (sender threads waited 77 to 84 us for their wake-up against
 * 16 to 19 us on an idle core, H200 host). A few shared threads, each busy with several streams,
 * park less and find a core.
 *
 * <p>Each stream goes to the thread with the fewest streams of its direction (then the fewest in
 * all), so sends and receives spread over the threads evenly. The threads start with the first
 * comm and stop when the last one has closed, so that a communicator's destroy leaves no thread.
 */
final class SharedIoThreads {
    private final StreamWorker[] workers;
    private final int[] sending;
    private final int[] receiving;
    private final long spinNanos;
    private boolean started;
    /** Comms assigned and not yet released. */
    private int comms;

    /** @param threads how many (at least 1) */
    SharedIoThreads(int threads, long spinNanos) {
        if (threads < 1) {
            throw new IllegalArgumentException("shared I/O threads: " + threads);
        }
        this.workers = new StreamWorker[threads];
        this.sending = new int[threads];
        this.receiving = new int[threads];
        this.spinNanos = spinNanos;
    }

    /** @return how many threads there are */
    int size() {
        return workers.length;
    }

    /**
     * Chooses a thread for each of one comm's streams and counts them there.
     *
     * @return {@code chosen[i]}, the thread of {@code streams[i]}
     */
    synchronized StreamWorker[] assign(DataStream[] streams) {
        startOrReplaceDead();
        comms++;
        StreamWorker[] chosen = new StreamWorker[streams.length];
        for (int i = 0; i < streams.length; i++) {
            int[] load = streams[i].sending() ? sending : receiving;
            int best = 0;
            for (int w = 1; w < workers.length; w++) {
                int total = sending[w] + receiving[w];
                int bestTotal = sending[best] + receiving[best];
                if (load[w] < load[best] || load[w] == load[best] && total < bestTotal) {
                    best = w;
                }
            }
            load[best]++;
            chosen[i] = workers[best];
        }
        return chosen;
    }

    /** A comm that was assigned {@code chosen} for {@code streams} let them go. */
    synchronized void release(DataStream[] streams, StreamWorker[] chosen) {
        for (int i = 0; i < streams.length; i++) {
            int w = Arrays.asList(workers).indexOf(chosen[i]);
            if (w >= 0) {
                int[] load = streams[i].sending() ? sending : receiving;
                load[w] = Math.max(0, load[w] - 1);
            }
        }
        if (--comms == 0) {
            for (StreamWorker w : workers) {
                w.stop();
            }
            started = false;
        }
    }

    /** Starts the threads at the first comm; a thread that ended (it failed) is replaced by a new one. */
    private void startOrReplaceDead() {
        for (int w = 0; w < workers.length; w++) {
            if (!started || !workers[w].isAlive()) {
                workers[w] = StreamWorker.shared(spinNanos, "jccl-socket-io-" + w);
                workers[w].start();
                sending[w] = 0;
                receiving[w] = 0;
            }
        }
        started = true;
    }

    /** @return whether the threads run (some comm is assigned to them) */
    synchronized boolean running() {
        return started;
    }

    /** @return blocks on readiness and idle parks of all the threads, for a close line */
    synchronized long[] blocksAndParks() {
        long selects = 0;
        long parks = 0;
        for (StreamWorker w : workers) {
            if (w != null) {
                selects += w.selects();
                parks += w.parks();
            }
        }
        return new long[] {selects, parks};
    }
}
