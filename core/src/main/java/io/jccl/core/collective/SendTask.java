package io.jccl.core.collective;

import io.jccl.core.kernel.ReductionKernel;
import io.jccl.core.transport.SendConnection;

import java.util.List;

/**
 * A group's sends to one peer, in call order, cut into slot-sized messages. The receiving rank
 * cuts its receives the same way, so the two match message for message.
 */
public final class SendTask extends Task {
    private final SendConnection connection;
    private final ReductionKernel kernel;
    private final Transfer[] transfers;
    private int index;
    private long sent;

    SendTask(SendConnection connection, ReductionKernel kernel, List<Transfer> transfers) {
        this.connection = connection;
        this.kernel = kernel;
        this.transfers = transfers.toArray(new Transfer[0]);
    }

    @Override
    void start() {
        skipEmpty();
    }

    @Override
    int progress() {
        int work = 0;
        int slot = connection.slotBytes();
        while (index < transfers.length && connection.hasRoom()) {
            Transfer t = transfers[index];
            int n = (int) Math.min(slot, t.bytes() - sent);
            kernel.copy(t.buffer(), t.offset() + sent, connection.fillSlot(), 0, n);
            connection.publish(n);
            sent += n;
            work++;
            if (sent == t.bytes()) {
                index++;
                sent = 0;
                skipEmpty();
            }
        }
        return work;
    }

    /** Zero-byte transfers send nothing; the receiver skips them too. */
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
