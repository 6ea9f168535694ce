package io.jccl.core.transport;

import io.jccl.core.JcclException;
import io.jccl.core.bootstrap.Bootstrap;
import io.jccl.spi.ListenComm;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Makes connections. Through shared memory with a rank of the same host (NCCL's SHM transport):
 * the receiving side creates the buffer and names it to the sender through the bootstrap, and the
 * sender maps it. Through the network as NCCL's {@code net.cc} does (spec 9.5): the receiving side listens and
 * sends its 128-byte handle to the sender through the bootstrap; the sender connects with it;
 * both retry {@code connect} / {@code accept} without blocking until the plugin returns a comm;
 * each side then registers its slot buffer. Every handle goes out before any is awaited, so ranks
 * that set up connections to each other in any order cannot deadlock. Runs on the caller's thread
 * (NCCL's service thread), bounded by the communicator's timeout.
 */
public final class ConnectionSetup {
    private ConnectionSetup() {
    }

    /**
     * One connection to make.
     *
     * @param peer      the other rank
     * @param send      {@code true} for the sending direction
     * @param device    the plugin device to use
     * @param slotBytes bytes per slot
     * @param tag       bootstrap tag of the handle message; the two ends use the same
     * @param name      for messages, e.g. {@code channel 0 send to rank 1}
     * @param shm       {@code true} to connect through shared memory (the peer is on this host), else the network
     * @param buffer    the slot buffer ({@code NCCL_STEPS x slotBytes}) of a network connection, or null to
     *                  allocate one in the arena: a GPU's FIFO in pinned host memory (see
     *                  {@link io.jccl.core.device.NetFifo}) is its caller's
     * @param onDevice  {@code buffer} is GPU memory: registered as {@link PointerType#CUDA} (the transport
     *                  must support it) and flushed after each receive (GPUDirect)
     */
    public record Request(int peer, boolean send, int device, int slotBytes, int tag, String name, boolean shm,
                          MemorySegment buffer, boolean onDevice) {
        public Request {
            if (buffer != null && (shm || buffer.byteSize() < (long) Connection.STEPS * slotBytes)) {
                throw new IllegalArgumentException(name + ": a given buffer is for a network connection and holds "
                        + Connection.STEPS + " slots of " + slotBytes + " bytes");
            }
            if (onDevice && buffer == null) {
                throw new IllegalArgumentException(name + ": device memory must be given");
            }
        }

        public Request(int peer, boolean send, int device, int slotBytes, int tag, String name, boolean shm,
                       MemorySegment buffer) {
            this(peer, send, device, slotBytes, tag, name, shm, buffer, false);
        }

        public Request(int peer, boolean send, int device, int slotBytes, int tag, String name, boolean shm) {
            this(peer, send, device, slotBytes, tag, name, shm, null, false);
        }
    }

    /**
     * Makes the connections, in the order given.
     *
     * @param arena where slot buffers are allocated (any thread may access them)
     * @throws JcclException if the plugin fails, a peer does not answer within the timeout, or a
     *                       device cannot move host memory
     */
    public static List<Connection> establish(List<Request> requests, NetPlugin net, Bootstrap bootstrap, Arena arena,
                                             Duration timeout, NetLogger log) {
        int n = requests.size();
        int shm = 0;
        for (Request r : requests) {
            shm += r.shm() ? 1 : 0;
        }
        io.jccl.core.observe.ConnectionSetupEvent event = io.jccl.core.observe.Events.beginConnections(bootstrap.rank(),
                n, shm, n == 0 ? "" : requests.get(0).name());
        ListenComm[] listens = new ListenComm[n];
        NetHandle[] peerHandles = new NetHandle[n];
        SendComm[] sends = new SendComm[n];
        RecvComm[] recvs = new RecvComm[n];
        Connection[] result = new Connection[n];
        List<Connection> made = new ArrayList<>();
        boolean ok = false;
        try {
            connectShared(requests, result, made, bootstrap, arena, log);
            for (int i = 0; i < n; i++) {
                Request r = requests.get(i);
                if (r.shm()) {
                    continue;
                }
                checkDevice(net, r);
                if (!r.send()) {
                    NetHandle h = NetHandle.allocate();
                    listens[i] = net.listen(r.device(), h);
                    bootstrap.send(r.peer(), r.tag(), h.toByteArray());
                }
            }
            for (int i = 0; i < n; i++) {
                Request r = requests.get(i);
                if (r.send() && !r.shm()) {
                    peerHandles[i] = NetHandle.fromBytes(bootstrap.receive(r.peer(), r.tag()));
                }
            }
            long deadline = System.nanoTime() + timeout.toNanos();
            int pending = n;
            long rounds = 0;
            while (pending > 0) {
                pending = 0;
                for (int i = 0; i < n; i++) {
                    Request r = requests.get(i);
                    if (r.shm()) {
                        continue;
                    }
                    if (r.send() && sends[i] == null) {
                        sends[i] = net.connect(r.device(), peerHandles[i]);
                        pending += sends[i] == null ? 1 : 0;
                    } else if (!r.send() && recvs[i] == null) {
                        recvs[i] = net.accept(listens[i]);
                        if (recvs[i] != null) {
                            net.closeListen(listens[i]);
                            listens[i] = null;
                        } else {
                            pending++;
                        }
                    }
                }
                if (pending > 0) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new JcclException(NetResult.TIMEOUT, firstPendingPeer(requests, sends, recvs),
                                "connection set-up timed out after " + timeout.toMillis() + " ms: "
                                        + describePending(requests, sends, recvs), null);
                    }
                    if (++rounds > 100) {
                        sleepBriefly();
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }
            for (int i = 0; i < n; i++) {
                Request r = requests.get(i);
                if (r.shm()) {
                    continue;
                }
                MemorySegment buffer = r.buffer() != null ? r.buffer()
                        : arena.allocate((long) Connection.STEPS * r.slotBytes(), 4096);
                if (r.send()) {
                    NetSendConnection c = new NetSendConnection(net, sends[i], bootstrap.rank(), r.peer(), r.name(),
                            buffer, r.slotBytes());
                    sends[i] = null;
                    made.add(c);
                    result[i] = c;
                    c.memoryHandle = net.regMr(c.comm(), buffer, r.onDevice() ? PointerType.CUDA : PointerType.HOST);
                } else {
                    NetRecvConnection c = new NetRecvConnection(net, recvs[i], r.peer(), r.name(), buffer, r.slotBytes(),
                            r.onDevice());
                    recvs[i] = null;
                    made.add(c);
                    result[i] = c;
                    c.memoryHandle = net.regMr(c.comm(), buffer, r.onDevice() ? PointerType.CUDA : PointerType.HOST);
                }
                log.info(LogSubsystem.INIT | LogSubsystem.NET, "Connected %s via %s/%d (%d x %d B slots%s)", r.name(),
                        net.name(), r.device(), Connection.STEPS, r.slotBytes(), r.onDevice() ? " in GPU memory, GPUDirect" : "");
            }
            ok = true;
            return List.of(result);
        } catch (NetException e) {
            throw new JcclException(e.result() == NetResult.REMOTE_ERROR ? NetResult.REMOTE_ERROR : NetResult.SYSTEM_ERROR,
                    JcclException.NO_RANK, "connection set-up through " + net.name() + " failed: " + e.getMessage(), e);
        } finally {
            io.jccl.core.observe.Events.end(event, !ok);
            if (!ok) {
                for (Connection c : made) {
                    c.close();
                }
                closeAll(net, listens, sends, recvs);
            }
        }
    }

    /**
     * The shared-memory requests: every receiving side creates its buffer and names it to the
     * sender before any sending side waits for a name, so that ranks cannot deadlock.
     */
    private static void connectShared(List<Request> requests, Connection[] result, List<Connection> made,
                                      Bootstrap bootstrap, Arena arena, NetLogger log) {
        for (int i = 0; i < requests.size(); i++) {
            Request r = requests.get(i);
            if (r.shm() && !r.send()) {
                ShmBuffer.Created b = ShmBuffer.create(arena, r.slotBytes(), r.name());
                ShmRecvConnection c = new ShmRecvConnection(r.peer(), r.name(), b.mapped(), r.slotBytes(), b.path());
                made.add(c);
                result[i] = c;
                bootstrap.send(r.peer(), r.tag(), encodeShmName(b.path(), b.cookie()));
            }
        }
        for (int i = 0; i < requests.size(); i++) {
            Request r = requests.get(i);
            if (r.shm() && r.send()) {
                byte[] name = bootstrap.receive(r.peer(), r.tag());
                ByteBuffer in = ByteBuffer.wrap(name);
                if (name.length < 12 || in.getInt() != SHM_NAME_MAGIC) {
                    throw new JcclException(NetResult.INTERNAL_ERROR, r.peer(), r.name() + ": rank " + r.peer()
                            + " did not answer with a shared-memory buffer: do all ranks agree on NCCL_SHM_DISABLE "
                            + "and NCCL_HOSTID?", null);
                }
                long cookie = in.getLong();
                Path path = Path.of(StandardCharsets.UTF_8.decode(in).toString());
                MemorySegment mapped = ShmBuffer.open(arena, path, cookie, r.slotBytes(), r.peer(), r.name());
                ShmSendConnection c = new ShmSendConnection(r.peer(), r.name(), mapped, r.slotBytes());
                made.add(c);
                result[i] = c;
            }
        }
        for (Request r : requests) {
            if (r.shm()) {
                log.info(LogSubsystem.INIT, "Connected %s via SHM (%d x %d B slots)", r.name(), Connection.STEPS,
                        r.slotBytes());
            }
        }
    }

    private static final int SHM_NAME_MAGIC = 0x53484d31; // "SHM1"

    private static byte[] encodeShmName(Path path, long cookie) {
        byte[] p = path.toString().getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(12 + p.length).putInt(SHM_NAME_MAGIC).putLong(cookie).put(p).array();
    }

    private static void checkDevice(NetPlugin net, Request r) throws NetException {
        NetProperties p = net.getProperties(r.device());
        if (r.onDevice() && !PointerType.CUDA.isIn(p.ptrSupport())) {
            throw NetException.invalidUsage(net.name() + " device " + r.device() + " (" + p.name()
                    + ") cannot move GPU memory (ptrSupport " + PointerType.describe(p.ptrSupport()) + ")");
        }
        if (!PointerType.HOST.isIn(p.ptrSupport())) {
            throw NetException.invalidUsage(net.name() + " device " + r.device() + " (" + p.name()
                    + ") cannot move host memory (ptrSupport " + PointerType.describe(p.ptrSupport()) + ")");
        }
        if (p.maxP2pBytes() < r.slotBytes()) {
            throw NetException.invalidUsage(net.name() + " device " + r.device() + " sends at most " + p.maxP2pBytes()
                    + " bytes per message, less than a slot of " + r.slotBytes() + " (lower NCCL_BUFFSIZE)");
        }
    }

    private static int firstPendingPeer(List<Request> requests, SendComm[] sends, RecvComm[] recvs) {
        for (int i = 0; i < requests.size(); i++) {
            if (!requests.get(i).shm() && (requests.get(i).send() ? sends[i] == null : recvs[i] == null)) {
                return requests.get(i).peer();
            }
        }
        return JcclException.NO_RANK;
    }

    private static String describePending(List<Request> requests, SendComm[] sends, RecvComm[] recvs) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < requests.size(); i++) {
            Request r = requests.get(i);
            if (!r.shm() && (r.send() ? sends[i] == null : recvs[i] == null)) {
                b.append(b.isEmpty() ? "" : "; ").append(r.name()).append(r.send() ? " not connected" : " not accepted");
            }
        }
        return b.toString();
    }

    private static void sleepBriefly() {
        try {
            TimeUnit.MICROSECONDS.sleep(200);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "interrupted during connection set-up", e);
        }
    }

    private static void closeAll(NetPlugin net, ListenComm[] listens, SendComm[] sends, RecvComm[] recvs) {
        for (int i = 0; i < listens.length; i++) {
            try {
                if (listens[i] != null) {
                    net.closeListen(listens[i]);
                }
                if (sends[i] != null) {
                    net.closeSend(sends[i]);
                }
                if (recvs[i] != null) {
                    net.closeRecv(recvs[i]);
                }
            } catch (NetException | RuntimeException ignored) {
                // Set-up already failed; that failure is what the caller sees.
            }
        }
    }
}
