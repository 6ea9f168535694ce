package io.jccl.cli;

import io.jccl.core.Communicator;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A rank of {@link MultiHostRunTest}: says where it runs and what its ring goes through, after an
 * all-reduce; with the argument {@code collnet}, also a 2 MiB all-reduce and the algorithm that ran it.
 */
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
            if (args.length > 0 && args[0].equals("collnet")) {
                long count = 1 << 18;
                MemorySegment big = arena.allocate(8 * count, 64);
                for (long i = 0; i < count; i++) {
                    big.setAtIndex(ValueLayout.JAVA_LONG, i, (comm.rank() + 1) * (i + 1));
                }
                comm.allReduce(big, big, count, io.jccl.spi.DataType.INT64, io.jccl.spi.ReduceOp.SUM);
                long wrong = 0;
                long n = comm.size();
                for (long i = 0; i < count; i++) {
                    wrong += big.getAtIndex(ValueLayout.JAVA_LONG, i) == n * (n + 1) / 2 * (i + 1) ? 0 : 1;
                }
                System.out.println("collnet rank=" + comm.rank() + " algo="
                        + comm.algorithmFor(io.jccl.core.check.CollectiveKind.ALL_REDUCE, 8 * count) + " wrong=" + wrong);
            }
        }
    }
}
