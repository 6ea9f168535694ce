package io.jccl.cli;

import io.jccl.core.Communicator;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** A rank of {@link MultiHostRunTest}: says where it runs and what its ring goes through, after an all-reduce. */
public final class HostsProbe {
    private HostsProbe() {
    }

    public static void main(String[] args) {
        try (Communicator comm = Communicator.initFromEnvironment(); Arena arena = Arena.ofShared()) {
            MemorySegment v = arena.allocate(8);
            v.set(ValueLayout.JAVA_LONG, 0, comm.rank() + 1);
            comm.allReduce(v, v, 1, io.jccl.spi.DataType.INT64, io.jccl.spi.ReduceOp.SUM);
            System.out.println("probe rank=" + comm.rank() + " host=" + System.getenv("NCCL_HOSTID") + " local="
                    + System.getenv("LOCAL_RANK") + "/" + System.getenv("LOCAL_WORLD_SIZE") + " sum="
                    + v.get(ValueLayout.JAVA_LONG, 0) + " ring=" + comm.ringTransport());
        }
    }
}
