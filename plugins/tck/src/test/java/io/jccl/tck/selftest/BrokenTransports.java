package io.jccl.tck.selftest;

import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HexFormat;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Deliberately broken transports: each wraps a correct one and reproduces one bug that real
 * plugins ship with (peers.md), so that the kit's own tests can show which rule catches it.
 */
final class BrokenTransports {
    private BrokenTransports() {
    }

    /**
     * connect waits for the listener's acknowledgement, that is until the peer's accept has taken
     * the connection, instead of returning null meanwhile: harmless between two processes, a
     * deadlock when one proxy thread serves both ends of a loopback connection.
     */
    static final class BlockingConnect extends ForwardingNetPlugin {
        /** Accepted connections per listener, by the address and secret bytes of its handle. */
        private final Map<String, AtomicInteger> acceptedByHandle = new ConcurrentHashMap<>();
        private final Map<ListenComm, AtomicInteger> acceptedByListener =
                Collections.synchronizedMap(new IdentityHashMap<>());

        BlockingConnect(NetPlugin delegate) {
            super(delegate);
        }

        private static String key(NetHandle h) {
            return HexFormat.of().formatHex(h.toByteArray(), 0, 40);
        }

        @Override
        public ListenComm listen(int dev, NetHandle handle) throws NetException {
            ListenComm l = delegate.listen(dev, handle);
            AtomicInteger accepted = new AtomicInteger();
            acceptedByHandle.put(key(handle), accepted);
            acceptedByListener.put(l, accepted);
            return l;
        }

        @Override
        public RecvComm accept(ListenComm listenComm) throws NetException {
            RecvComm r = delegate.accept(listenComm);
            if (r != null) {
                acceptedByListener.get(listenComm).incrementAndGet();
            }
            return r;
        }

        @Override
        public SendComm connect(int dev, NetHandle handle) throws NetException {
            AtomicInteger accepted = acceptedByHandle.get(key(handle));
            int before = accepted == null ? 0 : accepted.get();
            SendComm c;
            while ((c = delegate.connect(dev, handle)) == null) {
                if (Thread.currentThread().isInterrupted()) {
                    return null;
                }
                LockSupport.parkNanos(1_000_000);
            }
            while (accepted != null && accepted.get() <= before && !Thread.currentThread().isInterrupted()) {
                LockSupport.parkNanos(1_000_000);
            }
            return c;
        }
    }

    /**
     * A completion ring sized for the 8 requests of v6-era NCCL: completions of receives posted
     * while more than 8 are outstanding on the comm are lost (test keeps returning false).
     */
    static final class LostCompletion extends ForwardingNetPlugin {
        private static final int RING = 8;
        private final Map<RecvComm, Integer> outstanding = Collections.synchronizedMap(new IdentityHashMap<>());

        LostCompletion(NetPlugin delegate) {
            super(delegate);
        }

        private static final class Tracked implements NetRequest {
            final NetRequest inner;
            final RecvComm comm;
            final boolean lost;
            boolean innerDone;

            Tracked(NetRequest inner, RecvComm comm, boolean lost) {
                this.inner = inner;
                this.comm = comm;
                this.lost = lost;
            }
        }

        @Override
        public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
                throws NetException {
            NetRequest r = delegate.irecv(comm, n, data, tags, mhandles);
            if (r == null) {
                return null;
            }
            int now = outstanding.merge(comm, 1, Integer::sum);
            return new Tracked(r, comm, now > RING);
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            if (!(request instanceof Tracked t)) {
                return delegate.test(request, sizes);
            }
            if (!t.innerDone) {
                try {
                    t.innerDone = delegate.test(t.inner, sizes);
                } catch (NetException e) {
                    outstanding.merge(t.comm, -1, Integer::sum);
                    throw e;
                }
                if (t.innerDone && !t.lost) {
                    outstanding.merge(t.comm, -1, Integer::sum);
                    return true;
                }
            }
            return false;
        }

        @Override
        public void closeRecv(RecvComm comm) throws NetException {
            outstanding.remove(comm);
            delegate.closeRecv(comm);
        }
    }

    /**
     * Completes receives out of order: when a receive is tested and the next one on its comm has
     * also arrived, their contents and sizes are exchanged, as a multi-rail transport that
     * completes whatever arrives first would.
     */
    static final class Reordering extends ForwardingNetPlugin {
        private final Map<RecvComm, ArrayDeque<Slot>> posted = Collections.synchronizedMap(new IdentityHashMap<>());

        Reordering(NetPlugin delegate) {
            super(delegate);
        }

        private static final class Slot implements NetRequest {
            final NetRequest inner;
            final RecvComm comm;
            final MemorySegment buffer;
            final int[] size = new int[1];
            boolean innerDone;
            boolean swapped;
            NetException failure;

            Slot(NetRequest inner, RecvComm comm, MemorySegment buffer) {
                this.inner = inner;
                this.comm = comm;
                this.buffer = buffer;
            }
        }

        @Override
        public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
                throws NetException {
            NetRequest r = delegate.irecv(comm, n, data, tags, mhandles);
            if (r == null || n != 1) {
                return r;
            }
            Slot s = new Slot(r, comm, data[0]);
            posted.computeIfAbsent(comm, c -> new ArrayDeque<>()).addLast(s);
            return s;
        }

        private void drive(Slot s) {
            if (s.innerDone || s.failure != null) {
                return;
            }
            try {
                s.innerDone = delegate.test(s.inner, s.size);
            } catch (NetException e) {
                s.failure = e;
            }
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            if (!(request instanceof Slot s)) {
                return delegate.test(request, sizes);
            }
            ArrayDeque<Slot> queue = posted.get(s.comm);
            drive(s);
            if (s.failure != null) {
                queue.remove(s);
                throw s.failure;
            }
            if (!s.innerDone) {
                return false;
            }
            if (!s.swapped) {
                Slot next = null;
                boolean seen = false;
                for (Slot q : queue) {
                    if (seen) {
                        next = q;
                        break;
                    }
                    seen = q == s;
                }
                if (next != null && !next.swapped) {
                    drive(next);
                    if (next.innerDone && next.size[0] <= s.buffer.byteSize() && s.size[0] <= next.buffer.byteSize()) {
                        swap(s, next);
                    }
                }
            }
            queue.remove(s);
            if (sizes != null) {
                sizes[0] = s.size[0];
            }
            return true;
        }

        private static void swap(Slot a, Slot b) {
            int sa = a.size[0];
            int sb = b.size[0];
            MemorySegment tmp = Arena.ofAuto().allocate(Math.max(1, sa));
            tmp.asSlice(0, sa).copyFrom(a.buffer.asSlice(0, sa));
            a.buffer.asSlice(0, sb).copyFrom(b.buffer.asSlice(0, sb));
            b.buffer.asSlice(0, sa).copyFrom(tmp.asSlice(0, sa));
            a.size[0] = sb;
            b.size[0] = sa;
            a.swapped = true;
            b.swapped = true;
        }

        @Override
        public void closeRecv(RecvComm comm) throws NetException {
            posted.remove(comm);
            delegate.closeRecv(comm);
        }
    }

    /**
     * Receives into a larger bounce buffer and copies what fits: a message larger than its receive
     * is cut to the buffer's size and reported as complete.
     */
    static final class SilentTruncation extends ForwardingNetPlugin {
        private static final long SLACK = 1L << 20;

        SilentTruncation(NetPlugin delegate) {
            super(delegate);
        }

        private static final class Bounced implements NetRequest {
            final NetRequest inner;
            final RecvComm comm;
            final MemorySegment user;
            final MemorySegment bounce;
            final MemoryHandle bounceHandle;

            Bounced(NetRequest inner, RecvComm comm, MemorySegment user, MemorySegment bounce, MemoryHandle h) {
                this.inner = inner;
                this.comm = comm;
                this.user = user;
                this.bounce = bounce;
                this.bounceHandle = h;
            }
        }

        @Override
        public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
                throws NetException {
            if (n != 1) {
                return delegate.irecv(comm, n, data, tags, mhandles);
            }
            MemorySegment bounce = Arena.ofAuto().allocate(data[0].byteSize() + SLACK, 4096);
            MemoryHandle h = delegate.regMr(comm, bounce, PointerType.HOST);
            NetRequest r = delegate.irecv(comm, 1, new MemorySegment[] {bounce}, tags, new MemoryHandle[] {h});
            if (r == null) {
                delegate.deregMr(comm, h);
                return null;
            }
            return new Bounced(r, comm, data[0], bounce, h);
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            if (!(request instanceof Bounced b)) {
                return delegate.test(request, sizes);
            }
            int[] got = new int[1];
            if (!delegate.test(b.inner, got)) {
                return false;
            }
            int kept = (int) Math.min(got[0], b.user.byteSize());
            b.user.asSlice(0, kept).copyFrom(b.bounce.asSlice(0, kept));
            delegate.deregMr(b.comm, b.bounceHandle);
            if (sizes != null) {
                sizes[0] = kept;
            }
            return true;
        }
    }

    /**
     * "A request fails and everything hangs" (aws-ofi-nccl #683): failures of the peer are
     * swallowed; test keeps answering "not done", isend and irecv "would block".
     */
    static final class HangOnPeerDeath extends ForwardingNetPlugin {
        /**
         * The failures it swallowed, first few, for the self-test's message: where a rule that no
         * peer death concerns fails with "no request completed", this says which error was hidden.
         */
        static final Queue<String> SWALLOWED = new ConcurrentLinkedQueue<>();
        private static final int SWALLOWED_KEPT = 8;

        private final Set<NetRequest> dead = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

        HangOnPeerDeath(NetPlugin delegate) {
            super(delegate);
        }

        private static boolean peerGone(NetException e) {
            boolean gone = e.result() == NetResult.REMOTE_ERROR || e.result() == NetResult.SYSTEM_ERROR;
            if (gone && SWALLOWED.size() < SWALLOWED_KEPT) {
                SWALLOWED.add(e.result() + ": " + e.getMessage());
            }
            return gone;
        }

        @Override
        public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException {
            try {
                return delegate.isend(comm, data, tag, mhandle);
            } catch (NetException e) {
                if (peerGone(e)) {
                    return null;
                }
                throw e;
            }
        }

        @Override
        public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
                throws NetException {
            try {
                return delegate.irecv(comm, n, data, tags, mhandles);
            } catch (NetException e) {
                if (peerGone(e)) {
                    return null;
                }
                throw e;
            }
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            if (dead.contains(request)) {
                return false;
            }
            try {
                return delegate.test(request, sizes);
            } catch (NetException e) {
                if (peerGone(e)) {
                    dead.add(request);
                    return false;
                }
                throw e;
            }
        }
    }

    /** test reports the posted capacity of a receive instead of the bytes that arrived. */
    static final class WrongSizeInTest extends ForwardingNetPlugin {
        WrongSizeInTest(NetPlugin delegate) {
            super(delegate);
        }

        private static final class Sized implements NetRequest {
            final NetRequest inner;
            final long[] capacities;

            Sized(NetRequest inner, long[] capacities) {
                this.inner = inner;
                this.capacities = capacities;
            }
        }

        @Override
        public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
                throws NetException {
            NetRequest r = delegate.irecv(comm, n, data, tags, mhandles);
            if (r == null) {
                return null;
            }
            long[] caps = new long[n];
            for (int i = 0; i < n; i++) {
                caps[i] = data[i].byteSize();
            }
            return new Sized(r, caps);
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            if (!(request instanceof Sized s)) {
                return delegate.test(request, sizes);
            }
            boolean done = delegate.test(s.inner, sizes);
            if (done && sizes != null) {
                for (int i = 0; i < s.capacities.length; i++) {
                    sizes[i] = (int) s.capacities[i];
                }
            }
            return done;
        }
    }

    /** deregMr casts the handle, as a C plugin dereferences it: an unknown handle is a crash, not an error. */
    static final class UncheckedDereg extends ForwardingNetPlugin {
        private final Set<MemoryHandle> issued = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

        UncheckedDereg(NetPlugin delegate) {
            super(delegate);
        }

        @Override
        public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
            MemoryHandle h = delegate.regMr(comm, data, type);
            issued.add(h);
            return h;
        }

        @Override
        public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
            if (!issued.contains(mhandle)) {
                throw new ClassCastException(mhandle.getClass().getName() + " cannot be cast to the transport's "
                        + "registration type");
            }
            delegate.deregMr(comm, mhandle);
        }
    }

    /** Reports its speed in the wrong unit (Tb/s where NCCL expects Mbps), which rounds down to 0. */
    static final class ZeroSpeed extends ForwardingNetPlugin {
        ZeroSpeed(NetPlugin delegate) {
            super(delegate);
        }

        @Override
        public NetProperties getProperties(int dev) throws NetException {
            NetProperties p = delegate.getProperties(dev);
            return p.toBuilder().speedMbps(p.speedMbps() / 1_000_000).build();
        }
    }
}
