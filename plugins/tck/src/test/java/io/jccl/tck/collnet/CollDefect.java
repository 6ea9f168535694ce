package io.jccl.tck.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;
import io.jccl.tck.internal.collnet.ElementCodec;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.function.UnaryOperator;

/** Bugs of CollNet transports the kit must catch, with the rules that must flag each. */
enum CollDefect {
    NONE(d -> d, Set.of()),
    /** reduceSupport says yes to every pair, but iallreduce cannot do 8-bit floats. */
    LYING_REDUCE_SUPPORT(LyingReduceSupport::new, Set.of("coll.4")),
    /** Odd counts lose their last element: a vectorised loop without its tail. */
    ODD_COUNT_TAIL(OddCountTail::new, Set.of("coll.4", "coll.9")),
    /** iallreduce takes pairs reduceSupport refuses, and produces nothing. */
    ACCEPTS_UNSUPPORTED(AcceptsUnsupported::new, Set.of("coll.5")),
    /** A rank that is gone is never noticed: requests stay "not done", calls "would block". */
    HANG_WHEN_A_RANK_CLOSES(HangWhenARankCloses::new, Set.of("coll.7")),
    /** Rank 1 ends with other last bits than rank 0 where a float result is not a whole number: its own order. */
    RANKS_DIFFER_IN_THE_LAST_BITS(RanksDifferInTheLastBits::new, Set.of("coll.8")),
    /** test reports the size of the latest request issued, not of the one tested. */
    SIZE_OF_THE_LATEST_REQUEST(SizeOfTheLatestRequest::new, Set.of("coll.9"));

    private final UnaryOperator<CollNetPlugin> wrap;
    private final Set<String> mustFlag;

    CollDefect(UnaryOperator<CollNetPlugin> wrap, Set<String> mustFlag) {
        this.wrap = wrap;
        this.mustFlag = mustFlag;
    }

    CollNetPlugin wrap(CollNetPlugin correct) {
        return wrap.apply(correct);
    }

    Set<String> mustFlag() {
        return mustFlag;
    }

    static final class LyingReduceSupport extends ForwardingCollNetPlugin {
        LyingReduceSupport(CollNetPlugin d) {
            super(d);
        }

        @Override
        public boolean reduceSupport(DataType dataType, ReduceOp op) {
            return true;
        }
    }

    static final class OddCountTail extends ForwardingCollNetPlugin {
        OddCountTail(CollNetPlugin d) {
            super(d);
        }

        private record Full(NetRequest inner, long bytes) implements NetRequest {
        }

        @Override
        public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                     DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
                throws NetException {
            long even = count & ~1L;
            NetRequest r = delegate.iallreduce(comm, sendData.asSlice(0, even * dataType.size()),
                    recvData.asSlice(0, even * dataType.size()), even, dataType, op, sendMhandle, recvMhandle);
            return r == null ? null : new Full(r, count * dataType.size());
        }

        @Override
        public boolean test(NetRequest request, int[] size) throws NetException {
            if (!(request instanceof Full f)) {
                return delegate.test(request, size);
            }
            boolean done = delegate.test(f.inner(), size);
            if (done && size != null) {
                size[0] = (int) f.bytes();
            }
            return done;
        }
    }

    static final class AcceptsUnsupported extends ForwardingCollNetPlugin {
        AcceptsUnsupported(CollNetPlugin d) {
            super(d);
        }

        private record Nothing() implements NetRequest {
        }

        @Override
        public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                     DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
                throws NetException {
            if (!delegate.reduceSupport(dataType, op)) {
                return new Nothing();
            }
            return delegate.iallreduce(comm, sendData, recvData, count, dataType, op, sendMhandle, recvMhandle);
        }

        @Override
        public boolean test(NetRequest request, int[] size) throws NetException {
            return request instanceof Nothing || delegate.test(request, size);
        }
    }

    static final class HangWhenARankCloses extends ForwardingCollNetPlugin {
        HangWhenARankCloses(CollNetPlugin d) {
            super(d);
        }

        @Override
        public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                     DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
                throws NetException {
            try {
                return delegate.iallreduce(comm, sendData, recvData, count, dataType, op, sendMhandle, recvMhandle);
            } catch (NetException e) {
                if (e.result() == NetResult.REMOTE_ERROR) {
                    return null;
                }
                throw e;
            }
        }

        @Override
        public boolean test(NetRequest request, int[] size) throws NetException {
            try {
                return delegate.test(request, size);
            } catch (NetException e) {
                if (e.result() == NetResult.REMOTE_ERROR) {
                    return false;
                }
                throw e;
            }
        }
    }

    static final class RanksDifferInTheLastBits extends ForwardingCollNetPlugin {
        private final java.util.Map<CollComm, Integer> ranks = new java.util.concurrent.ConcurrentHashMap<>();

        RanksDifferInTheLastBits(CollNetPlugin d) {
            super(d);
        }

        private record Nudged(NetRequest inner, MemorySegment recv, DataType type, boolean nudge) implements NetRequest {
        }

        @Override
        public CollComm connect(NetHandle[] handles, int rank, ListenComm listenComm) throws NetException {
            CollComm c = delegate.connect(handles, rank, listenComm);
            ranks.put(c, rank);
            return c;
        }

        @Override
        public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                     DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
                throws NetException {
            NetRequest r = delegate.iallreduce(comm, sendData, recvData, count, dataType, op, sendMhandle, recvMhandle);
            boolean nudge = ranks.getOrDefault(comm, 0) == 1 && count > 0
                    && (dataType == DataType.FLOAT32 || dataType == DataType.FLOAT64);
            return r == null ? null : new Nudged(r, recvData, dataType, nudge);
        }

        @Override
        public boolean test(NetRequest request, int[] size) throws NetException {
            if (!(request instanceof Nudged n)) {
                return delegate.test(request, size);
            }
            boolean done = delegate.test(n.inner(), size);
            if (done && n.nudge()) {
                double v = ElementCodec.get(n.recv(), 0, n.type());
                if (v != Math.rint(v)) {
                    ElementCodec.put(n.recv(), 0, n.type(), n.type() == DataType.FLOAT32 ? Math.nextUp((float) v)
                            : Math.nextUp(v));
                }
            }
            return done;
        }
    }

    static final class SizeOfTheLatestRequest extends ForwardingCollNetPlugin {
        private final java.util.Map<CollComm, Integer> latestBytes = new java.util.concurrent.ConcurrentHashMap<>();

        SizeOfTheLatestRequest(CollNetPlugin d) {
            super(d);
        }

        @Override
        public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                     DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
                throws NetException {
            NetRequest r = delegate.iallreduce(comm, sendData, recvData, count, dataType, op, sendMhandle, recvMhandle);
            if (r == null) {
                return null;
            }
            latestBytes.put(comm, (int) (count * dataType.size()));
            return new OfComm(r, comm);
        }

        private record OfComm(NetRequest inner, CollComm comm) implements NetRequest {
        }

        @Override
        public boolean test(NetRequest request, int[] size) throws NetException {
            if (!(request instanceof OfComm o)) {
                return delegate.test(request, size);
            }
            boolean done = delegate.test(o.inner(), size);
            if (done && size != null) {
                size[0] = latestBytes.get(o.comm());
            }
            return done;
        }
    }
}
