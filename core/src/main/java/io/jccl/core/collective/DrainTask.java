package io.jccl.core.collective;

import io.jccl.core.transport.Connection;

/**
 * Done once every connection has delivered what earlier operations gave it: an operation that
 * completes a user's operation only means its buffers may be reused, while its last messages may
 * still be on their way. Closing a communicator waits for this.
 */
public final class DrainTask extends Task {
    private final Connection[] connections;

    public DrainTask(Connection[] connections) {
        this.connections = connections;
    }

    @Override
    void start() {
    }

    @Override
    int progress() {
        for (Connection c : connections) {
            if (!c.drained()) {
                return 0;
            }
        }
        done = true;
        return 1;
    }

    @Override
    int blockingPeer() {
        for (Connection c : connections) {
            if (!c.drained()) {
                return c.peer;
            }
        }
        return -1;
    }

    @Override
    String waitingFor() {
        for (Connection c : connections) {
            if (!c.drained()) {
                return c.waitingFor();
            }
        }
        return "nothing";
    }
}
