package io.jccl.cli.examples;

import io.jccl.core.Communicator;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The smallest JCCL program: {@code bin/jccl run -np 4 io.jccl.cli.examples.HelloAllReduce}. Each
 * rank joins from its launcher's variables and all-reduces its rank number.
 */
public final class HelloAllReduce {
    private HelloAllReduce() {
    }

    public static void main(String[] args) {
        try (Communicator comm = Communicator.initFromEnvironment(); Arena arena = Arena.ofShared()) {
            MemorySegment x = arena.allocate(ValueLayout.JAVA_INT);
            x.set(ValueLayout.JAVA_INT, 0, comm.rank());
            comm.allReduce(x, x, 1, DataType.INT32, ReduceOp.SUM);
            System.out.printf("rank %d of %d over %s: the sum of all ranks is %d%n", comm.rank(), comm.size(),
                    comm.transport(), x.get(ValueLayout.JAVA_INT, 0));
        }
    }
}
