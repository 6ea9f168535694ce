package io.jccl.core.ll;

import java.lang.foreign.MemorySegment;

/**
 * How the ranks of one small operation hand each other their contributions, one operation at a
 * time, on the calling thread. Every contribution (a rank's own included) is seen as a segment
 * whose data starts at {@link #HEADER}, after the sender's operation number and the call's
 * {@link Signature}, which the reader checks.
 */
sealed interface Exchange permits BoardExchange, MeshExchange {
    /** Who publishes to or reads from whom: every other rank. */
    int EVERYONE = -1;
    /** No rank. */
    int NOBODY = -2;
    /** Bytes before the data in a contribution. */
    long HEADER = io.jccl.core.transport.ShmBoard.HEADER;

    /**
     * Starts operation {@code seq}: publishes {@code bytes} of {@code src} at {@code offset}.
     *
     * @param signature  what the call is ({@link Signature}), checked by the readers
     * @param blockBytes for a contribution of one block per rank (reduce-scatter) the block size, else 0
     * @param to         who reads the contribution: {@link #EVERYONE}, {@link #NOBODY} or one rank
     * @param from       whose contributions this rank reads: {@link #EVERYONE}, {@link #NOBODY} or one rank
     */
    void publish(long seq, long signature, MemorySegment src, long offset, long bytes, long blockBytes, int to,
                 int from, Waiter waiter);

    /**
     * Waits for rank {@code k}'s contribution to the current operation.
     *
     * @return the segment holding it, data at {@link #HEADER}
     */
    MemorySegment contribution(int k, Waiter waiter);

    /**
     * @return where the block for rank {@code reader} starts in a contribution's data after a
     *         publish with {@code blockBytes}: the exchange may deliver the whole vector or only
     *         the reader's block
     */
    long blockOffset(int reader, long blockBytes);

    /** Ends the operation: what this rank read may be overwritten, and what it sent has left. */
    void finish(Waiter waiter);

    /** @return {@code "board"} or {@code "mesh"}, for logs */
    String kind();

    /** Releases connections; the caller no longer uses the exchange. */
    void close();
}
