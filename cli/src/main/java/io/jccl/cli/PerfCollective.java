package io.jccl.cli;

import io.jccl.core.check.CollectiveKind;

import java.util.Locale;

/**
 * The benchmarks of nccl-tests, with their byte counts ({@code *GetCollByteCount}) and bus
 * bandwidth factors ({@code *GetBw}, spec 11.2).
 */
enum PerfCollective {
    ALL_REDUCE("all_reduce", CollectiveKind.ALL_REDUCE),
    ALL_GATHER("all_gather", CollectiveKind.ALL_GATHER),
    BROADCAST("broadcast", CollectiveKind.BROADCAST),
    REDUCE("reduce", CollectiveKind.REDUCE),
    REDUCE_SCATTER("reduce_scatter", CollectiveKind.REDUCE_SCATTER),
    ALL_TO_ALL("alltoall", CollectiveKind.ALL_TO_ALL),
    SEND_RECV("sendrecv", CollectiveKind.SEND_RECV);

    final String testsName;
    final CollectiveKind kind;

    PerfCollective(String testsName, CollectiveKind kind) {
        this.testsName = testsName;
        this.kind = kind;
    }

    /** @return nccl-tests' program name, e.g. {@code all_reduce_perf} */
    String program() {
        return testsName + "_perf";
    }

    /**
     * The element counts for a {@code -b/-e} size, as nccl-tests computes them.
     *
     * @param param             the count argument of the call (per rank where NCCL's is)
     * @param sendInPlaceOffset in-place send buffer offset per rank, in elements
     * @param recvInPlaceOffset in-place receive buffer offset per rank, in elements
     */
    record Counts(long send, long recv, long param, long sendInPlaceOffset, long recvInPlaceOffset) {
    }

    Counts counts(long bytes, int typeSize, int nranks) {
        long count = bytes / typeSize;
        long base = (count / nranks) & ~(16L / typeSize - 1);
        return switch (this) {
            case ALL_GATHER -> new Counts(base, base * nranks, base, base, 0);
            case REDUCE_SCATTER -> new Counts(base * nranks, base, base, 0, base);
            case ALL_TO_ALL -> new Counts(nranks * base, nranks * base, base, 0, 0);
            default -> new Counts(count, count, count, 0, 0);
        };
    }

    /** @return algorithm bandwidth in GB/s for {@code param} elements in {@code seconds} */
    double algBw(long param, int typeSize, double seconds, int nranks) {
        double bytes = (double) param * typeSize;
        if (this == ALL_GATHER || this == REDUCE_SCATTER || this == ALL_TO_ALL) {
            bytes *= nranks;
        }
        return bytes / 1.0e9 / seconds;
    }

    /** @return bus bandwidth over algorithm bandwidth */
    double busFactor(int nranks) {
        return switch (this) {
            case ALL_REDUCE -> 2.0 * (nranks - 1) / nranks;
            case ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL -> (double) (nranks - 1) / nranks;
            default -> 1.0;
        };
    }

    /** @return whether the collective has a root ({@code -r}) */
    boolean rooted() {
        return this == BROADCAST || this == REDUCE;
    }

    /**
     * @param name {@code all_reduce}, {@code all_reduce_perf}, {@code allreduce}, {@code AllReduce}, ...
     * @throws IllegalArgumentException listing the names
     */
    static PerfCollective parse(String name) {
        String n = name.toLowerCase(Locale.ROOT).replace("-", "_");
        if (n.endsWith("_perf")) {
            n = n.substring(0, n.length() - 5);
        }
        String squashed = n.replace("_", "");
        for (PerfCollective c : values()) {
            if (c.testsName.replace("_", "").equals(squashed)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown collective '" + name + "'; use all_reduce, all_gather, broadcast, "
                + "reduce, reduce_scatter, alltoall or sendrecv");
    }
}
