package io.jccl.tck.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;
import io.jccl.tck.internal.collnet.ElementCodec;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A CollNet transport for the kit's own tests, and nothing more: the ranks of one JVM reduce
 * through shared memory, so the CollNet rules can be shown to pass on a correct transport and to
 * catch broken ones until a real CollNet transport (net-collnet) exists. Like early SHARP, it
 * refuses 8-bit floats.
 */
public final class LoopbackCollNet implements CollNetPlugin {
    private static final long MAGIC = 0x4c4f4f50434f4c4cL; // "LLOCPOOL"
    private static final Set<DataType> UNSUPPORTED = Set.of(DataType.FLOAT8_E4M3, DataType.FLOAT8_E5M2);

    private final Map<String, Group> groups = new ConcurrentHashMap<>();

    @Override
    public String name() {
        return "TckLoopbackCollNet";
    }

    @Override
    public void init(NetLogger logger) {
    }

    @Override
    public int devices() {
        return 1;
    }

    @Override
    public NetProperties getProperties(int dev) throws NetException {
        if (dev != 0) {
            throw NetException.invalidArgument("no device " + dev);
        }
        return NetProperties.builder("loopback-coll0").speedMbps(100_000).build();
    }

    private record Listen(long id) implements ListenComm {
    }

    @Override
    public ListenComm listen(int dev, NetHandle handle) throws NetException {
        getProperties(dev);
        long id = ThreadLocalRandom.current().nextLong();
        handle.clear();
        handle.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 0, MAGIC);
        handle.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, 8, id);
        return new Listen(id);
    }

    @Override
    public CollComm connect(NetHandle[] handles, int rank, ListenComm listenComm) throws NetException {
        long[] ids = new long[handles.length];
        for (int i = 0; i < handles.length; i++) {
            if (handles[i].segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != MAGIC) {
                throw NetException.invalidArgument("handle " + i + " was not written by " + name());
            }
            ids[i] = handles[i].segment().get(ValueLayout.JAVA_LONG_UNALIGNED, 8);
        }
        if (!(listenComm instanceof Listen l) || l.id() != ids[rank]) {
            throw NetException.invalidArgument("rank " + rank + "'s listen comm does not match its handle");
        }
        Group g = groups.computeIfAbsent(Arrays.toString(ids), k -> new Group(handles.length));
        g.arrived.countDown();
        try {
            if (!g.arrived.await(10, TimeUnit.SECONDS)) {
                throw NetException.remoteError("not every rank of the group connected within 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw NetException.systemError("interrupted while connecting", e);
        }
        groups.remove(Arrays.toString(ids), g);
        return new Comm(g, rank);
    }

    @Override
    public boolean reduceSupport(DataType dataType, ReduceOp op) {
        return !UNSUPPORTED.contains(dataType) && op != ReduceOp.AVG;
    }

    private record Registration(Comm comm, MemorySegment memory) implements MemoryHandle {
    }

    @Override
    public MemoryHandle regMr(CollComm comm, MemorySegment data, PointerType type) throws NetException {
        if (type != PointerType.HOST) {
            throw NetException.invalidUsage("host memory only");
        }
        Registration r = new Registration(comm(comm), data);
        comm(comm).registrations.add(r);
        return r;
    }

    @Override
    public void deregMr(CollComm comm, MemoryHandle mhandle) throws NetException {
        if (!(mhandle instanceof Registration r) || !comm(comm).registrations.remove(r)) {
            throw NetException.invalidArgument("not a registration of this comm: " + mhandle);
        }
    }

    @Override
    public NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                                 DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
            throws NetException {
        Comm c = comm(comm);
        if (!reduceSupport(dataType, op)) {
            throw NetException.invalidArgument(op + " over " + dataType + " is not supported");
        }
        c.group.checkUsable();
        long seq = c.nextSeq++;
        Operation o = c.group.operations.computeIfAbsent(seq, s -> new Operation(c.group.size));
        o.deposit(c.rank, sendData, recvData, count, dataType, op);
        return new Request(c, seq, o);
    }

    @Override
    public NetRequest iflush(CollComm comm, MemorySegment data, MemoryHandle mhandle) {
        return null;
    }

    @Override
    public boolean test(NetRequest request, int[] size) throws NetException {
        if (!(request instanceof Request r)) {
            throw NetException.invalidArgument("not a request of " + name());
        }
        Group g = r.comm.group;
        boolean done = r.operation.progress(r.comm.rank, g);
        if (done) {
            g.operations.remove(r.seq, r.operation);
            if (size != null) {
                size[0] = (int) (r.operation.count * r.operation.type.size());
            }
        }
        return done;
    }

    @Override
    public void closeColl(CollComm comm) throws NetException {
        Comm c = comm(comm);
        c.group.closed = true;
    }

    @Override
    public void closeListen(ListenComm comm) {
    }

    private static Comm comm(CollComm comm) throws NetException {
        if (!(comm instanceof Comm c)) {
            throw NetException.invalidArgument("not a comm of TckLoopbackCollNet");
        }
        return c;
    }

    private static final class Group {
        final int size;
        final CountDownLatch arrived;
        final Map<Long, Operation> operations = new ConcurrentHashMap<>();
        volatile boolean closed;

        Group(int size) {
            this.size = size;
            this.arrived = new CountDownLatch(size);
        }

        void checkUsable() throws NetException {
            if (closed) {
                throw NetException.remoteError("a rank of the group closed its comm");
            }
        }
    }

    private static final class Comm implements CollComm {
        final Group group;
        final int rank;
        final Set<Registration> registrations = ConcurrentHashMap.newKeySet();
        long nextSeq;

        Comm(Group group, int rank) {
            this.group = group;
            this.rank = rank;
        }
    }

    private record Request(Comm comm, long seq, Operation operation) implements NetRequest {
    }

    /** One iallreduce of the group: every rank deposits its buffers; the result is computed once, then copied out per rank. */
    private static final class Operation {
        private static final long SLICE = 16_384;

        final MemorySegment[] sends;
        final MemorySegment[] recvs;
        final boolean[] copied;
        long count = -1;
        DataType type;
        ReduceOp op;
        int deposits;
        long reduced;
        MemorySegment result;

        Operation(int n) {
            sends = new MemorySegment[n];
            recvs = new MemorySegment[n];
            copied = new boolean[n];
        }

        synchronized void deposit(int rank, MemorySegment send, MemorySegment recv, long count, DataType type,
                                  ReduceOp op) throws NetException {
            if (this.count >= 0 && (this.count != count || this.type != type || this.op != op)) {
                throw NetException.invalidUsage("ranks issued different iallreduce calls at the same position");
            }
            this.count = count;
            this.type = type;
            this.op = op;
            sends[rank] = send;
            recvs[rank] = recv;
            deposits++;
        }

        synchronized boolean progress(int rank, Group g) throws NetException {
            if (deposits < sends.length) {
                g.checkUsable();
                return false;
            }
            if (result == null) {
                result = Arena.ofAuto().allocate(Math.max(1, count * type.size()), 8);
            }
            if (reduced < count) {
                // One slice per call: test never blocks, however large the operation.
                long end = Math.min(count, reduced + SLICE);
                for (long i = reduced; i < end; i++) {
                    double acc = ElementCodec.get(sends[0], i, type);
                    for (int r = 1; r < sends.length; r++) {
                        double v = ElementCodec.get(sends[r], i, type);
                        acc = switch (op) {
                            case SUM -> acc + v;
                            case PROD -> acc * v;
                            case MAX -> Math.max(acc, v);
                            case MIN -> Math.min(acc, v);
                            default -> throw new IllegalStateException(op.toString());
                        };
                    }
                    ElementCodec.put(result, i, type, acc);
                }
                reduced = end;
                return false;
            }
            if (!copied[rank]) {
                MemorySegment.copy(result, 0, recvs[rank], 0, count * type.size());
                copied[rank] = true;
            }
            return true;
        }
    }
}
