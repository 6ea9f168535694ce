package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * A rank in a child JVM, for tests that kill or freeze a peer:
 * {@code PeerRank <nranks> <rank> <unique id hex> <peer timeout ms>}. Joins, prints {@code READY},
 * then runs 4 MiB all-reduces until it fails or is killed, printing {@code ITERATION k} after each.
 */
public final class PeerRank {
    private PeerRank() {
    }

    public static void main(String[] args) {
        int nranks = Integer.parseInt(args[0]);
        int rank = Integer.parseInt(args[1]);
        UniqueId id = UniqueId.parse(args[2]);
        CommConfig config = CommConfig.builder().timeout(Duration.ofSeconds(30))
                .peerTimeout(Duration.ofMillis(Long.parseLong(args[3]))).build();
        Communicator comm = Communicator.init(nranks, id, rank, config);
        System.out.println("READY");
        System.out.flush();
        long count = args.length > 4 ? Long.parseLong(args[4]) : 1 << 20;
        // Small calls (the LL path) take microseconds: report every thousandth.
        int every = count < 1 << 16 ? 1000 : 1;
        MemorySegment buf = Arena.ofShared().allocate(count * 4);
        try {
            for (int i = 0; ; i++) {
                comm.allReduce(buf, buf, count, DataType.FLOAT32, ReduceOp.SUM);
                if (i % every == 0) {
                    System.out.println("ITERATION " + i / every);
                    System.out.flush();
                }
            }
        } catch (JcclException e) {
            System.out.println("FAILED " + e.getMessage());
            comm.abort();
        }
    }
}
