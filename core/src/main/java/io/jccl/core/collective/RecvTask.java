package io.jccl.core.collective;

import io.jccl.core.JcclException;
import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.RecvConnection;
import io.jccl.spi.NetResult;

import java.util.List;

/** A group's receives from one peer, in call order, in slot-sized messages (see {@link SendTask}). */
public final class RecvTask extends Task {
    private final RecvConnection connection;
    private final ReductionKernel kernel;
    private final Transfer[] transfers;
    private int index;
    private long received;

    RecvTask(RecvConnection connection, ReductionKernel kernel, List<Transfer> transfers) {
        this.connection = connection;
        this.kernel = kernel;
        this.transfers = transfers.toArray(new Transfer[0]);
    }

    @Override
    void start() {
        long messages = 0;
        for (Transfer t : transfers) {
            messages += (t.bytes() + connection.slotBytes() - 1) / connection.slotBytes();
        }
        connection.expect(messages);
        skipEmpty();
    }

    @Override
    int progress() {
        int work = 0;
        int slot = connection.slotBytes();
        while (index < transfers.length && connection.hasData()) {
            Transfer t = transfers[index];
            long expected = Math.min(slot, t.bytes() - received);
            int got = connection.dataSize();
            if (got != expected) {
                throw new JcclException(NetResult.INVALID_USAGE, connection.peer, "rank " + connection.peer + " sent a "
                        + got + "-byte piece where this rank's recv of " + t.bytes() + " bytes expected " + expected
                        + ": send and recv counts must match", null);
            }
            kernel.copy(connection.dataSlot(), 0, t.buffer(), t.offset() + received, got);
            connection.consume();
            received += got;
            work++;
            if (received == t.bytes()) {
                index++;
                received = 0;
                skipEmpty();
            }
        }
        return work;
    }

    private void skipEmpty() {
        while (index < transfers.length && transfers[index].bytes() == 0) {
            index++;
        }
        done = index == transfers.length;
    }

    @Override
    int blockingPeer() {
        return connection.peer;
    }

    @Override
    String waitingFor() {
        return connection.waitingFor();
    }
}
