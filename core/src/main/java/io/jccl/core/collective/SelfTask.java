package io.jccl.core.collective;

import io.jccl.core.kernel.ReductionKernel;

import java.util.List;

/** A group's sends to itself, each paired with the receive from itself issued in the same order: a copy. */
public final class SelfTask extends Task {
    private final ReductionKernel kernel;
    private final List<Transfer> sends;
    private final List<Transfer> recvs;

    SelfTask(ReductionKernel kernel, List<Transfer> sends, List<Transfer> recvs) {
        this.kernel = kernel;
        this.sends = sends;
        this.recvs = recvs;
    }

    @Override
    void start() {
    }

    @Override
    int progress() {
        for (int i = 0; i < sends.size(); i++) {
            Transfer s = sends.get(i);
            Transfer r = recvs.get(i);
            kernel.copy(s.buffer(), s.offset(), r.buffer(), r.offset(), s.bytes());
        }
        done = true;
        return 1;
    }

    @Override
    int blockingPeer() {
        return -1;
    }

    @Override
    String waitingFor() {
        return "nothing (copy to itself)";
    }
}
