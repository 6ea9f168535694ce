package io.jccl.core.check;

import io.jccl.core.Communicator;
import io.jccl.core.Completion;
import io.jccl.core.Group;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.MemorySegment;

/**
 * The collectives with what each rank contributes and what each rank must end up with, for
 * checking results with {@link VerifiableData}. Counts are NCCL's: per rank for all-gather,
 * reduce-scatter and all-to-all. Buffers are laid out as NCCL lays them out: {@code send} holds
 * {@link #sendElements} elements, {@code recv} {@link #recvElements}.
 */
public enum CollectiveKind {
    /** {@code ncclAllReduce}. */
    ALL_REDUCE(true),
    /** {@code ncclReduce} to the root. */
    REDUCE(true),
    /** {@code ncclReduceScatter}. */
    REDUCE_SCATTER(true),
    /** {@code ncclBroadcast} from the root. */
    BROADCAST(false),
    /** {@code ncclAllGather}. */
    ALL_GATHER(false),
    /** {@code ncclAlltoAll}. */
    ALL_TO_ALL(false),
    /** Every rank sends to {@code rank + 1} and receives from {@code rank - 1}, in one group (nccl-tests' sendrecv). */
    SEND_RECV(false);

    private final boolean reduces;

    CollectiveKind(boolean reduces) {
        this.reduces = reduces;
    }

    /** @return whether the collective takes a reduction operation */
    public boolean reduces() {
        return reduces;
    }

    /** @return elements of the send buffer for {@code count} */
    public long sendElements(long count, int nranks) {
        return this == REDUCE_SCATTER || this == ALL_TO_ALL ? count * nranks : count;
    }

    /** @return elements of the receive buffer for {@code count} */
    public long recvElements(long count, int nranks) {
        return this == ALL_GATHER || this == ALL_TO_ALL ? count * nranks : count;
    }

    /**
     * Issues the collective.
     *
     * @param op   ignored by collectives that only move data
     * @param root ignored by collectives without a root
     */
    public Completion issue(Communicator comm, MemorySegment send, MemorySegment recv, long count, DataType type,
                            ReduceOp op, int root) {
        int n = comm.size();
        int rank = comm.rank();
        return switch (this) {
            case ALL_REDUCE -> comm.allReduceAsync(send, recv, count, type, op);
            case REDUCE -> comm.reduceAsync(send, rank == root ? recv : null, count, type, op, root);
            case REDUCE_SCATTER -> comm.reduceScatterAsync(send, recv, count, type, op);
            case BROADCAST -> comm.broadcastAsync(rank == root ? send : null, recv, count, type, root);
            case ALL_GATHER -> comm.allGatherAsync(send, recv, count, type);
            case ALL_TO_ALL -> comm.allToAllAsync(send, recv, count, type);
            case SEND_RECV -> {
                Completion done;
                try (Group g = Group.start()) {
                    comm.sendAsync(send, count, type, (rank + 1) % n);
                    done = comm.recvAsync(recv, count, type, (rank - 1 + n) % n);
                }
                yield done;
            }
        };
    }

    /**
     * Queues the collective on {@code stream} for device buffers (the calls of NCCL with a stream);
     * complete once the stream has run that far.
     *
     * @throws io.jccl.core.JcclException for {@link #SEND_RECV}: a group of stream-ordered sends and
     *         receives is not supported yet
     */
    public void issueOnStream(Communicator comm, MemorySegment send, MemorySegment recv, long count, DataType type,
                              ReduceOp op, int root, io.jccl.cuda.CudaStream stream) {
        int rank = comm.rank();
        switch (this) {
            case ALL_REDUCE -> comm.allReduce(send, recv, count, type, op, stream);
            case REDUCE -> comm.reduce(send, rank == root ? recv : null, count, type, op, root, stream);
            case REDUCE_SCATTER -> comm.reduceScatter(send, recv, count, type, op, stream);
            case BROADCAST -> comm.broadcast(rank == root ? send : null, recv, count, type, root, stream);
            case ALL_GATHER -> comm.allGather(send, recv, count, type, stream);
            case ALL_TO_ALL -> comm.allToAll(send, recv, count, type, stream);
            case SEND_RECV -> throw io.jccl.core.JcclException.invalidUsage("sendrecv on device buffers needs a group "
                    + "of stream-ordered sends and receives, which this version does not support");
        }
    }

    /** Writes this rank's input into {@code send}. */
    public void fillInput(VerifiableData data, MemorySegment send, long count, int rank, int nranks, int root) {
        if (this == BROADCAST && rank != root) {
            return;
        }
        data.fill(send, 0, sendElements(count, nranks), rank, 0);
    }

    /**
     * Writes what this rank's receive buffer must hold into {@code expected}.
     *
     * @return the elements to compare; 0 where this rank has no output (reduce, off the root)
     */
    public long fillExpected(VerifiableData data, MemorySegment expected, long count, int rank, int nranks, int root) {
        long bytes = count * dataTypeSize(data);
        switch (this) {
            case ALL_REDUCE -> data.fillReduced(expected, 0, count, 0);
            case REDUCE -> {
                if (rank != root) {
                    return 0;
                }
                data.fillReduced(expected, 0, count, 0);
            }
            case REDUCE_SCATTER -> data.fillReduced(expected, 0, count, (long) rank * count);
            case BROADCAST -> data.fill(expected, 0, count, root, 0);
            case ALL_GATHER -> {
                for (int r = 0; r < nranks; r++) {
                    data.fill(expected, r * bytes, count, r, 0);
                }
            }
            case ALL_TO_ALL -> {
                for (int r = 0; r < nranks; r++) {
                    data.fill(expected, r * bytes, count, r, (long) rank * count);
                }
            }
            case SEND_RECV -> data.fill(expected, 0, count, (rank - 1 + nranks) % nranks, 0);
        }
        return recvElements(count, nranks);
    }

    private static int dataTypeSize(VerifiableData data) {
        return data.type().size();
    }
}
