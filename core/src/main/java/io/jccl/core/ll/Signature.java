package io.jccl.core.ll;

import io.jccl.core.JcclException;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;

/**
 * What a small call is, in one long that travels in each contribution's header: the collective,
 * the type, the operator, the root and the element count. Ranks that issue different calls at the
 * same point (a wrong count, a different root) get an error naming the difference, not wrong data.
 */
final class Signature {
    static final int ALL_REDUCE = 1;
    static final int BROADCAST = 2;
    static final int REDUCE = 3;
    static final int ALL_GATHER = 4;
    static final int REDUCE_SCATTER = 5;
    private static final String[] NAMES = {"?", "allReduce", "broadcast", "reduce", "allGather", "reduceScatter"};

    private Signature() {
    }

    /** @param count elements as the caller passed them; below 2^31 on this path */
    static long of(int kind, DataType type, ReduceOp op, int root, long count) {
        long head = kind | (long) type.code() << 4 | (long) (op == null ? 7 : op.code()) << 9 | (long) root << 12;
        return head << 32 | count;
    }

    static String describe(long signature) {
        int head = (int) (signature >>> 32);
        int kind = head & 15;
        String name = kind < NAMES.length ? NAMES[kind] : "?";
        int op = head >>> 9 & 7;
        int root = head >>> 12;
        return name + "(count " + (signature & 0xFFFF_FFFFL) + ", " + DataType.fromCode(head >>> 4 & 31).ncclName()
                + (op == 7 ? "" : ", " + ReduceOp.fromCode(op).ncclName())
                + (kind == BROADCAST || kind == REDUCE ? ", root " + root : "") + ")";
    }

    /** @throws JcclException if rank {@code k}'s call differs from this rank's */
    static void check(long mine, long theirs, int k) {
        if (mine != theirs) {
            throw JcclException.invalidUsage("rank " + k + " issued " + describe(theirs) + " where this rank issued "
                    + describe(mine) + ": every rank must issue the same collectives with the same arguments");
        }
    }
}
