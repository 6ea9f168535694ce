package io.jccl.core;

import io.jccl.core.bootstrap.Bootstrap;
import io.jccl.core.collective.CollNetLinks;
import io.jccl.core.transport.Connection;
import io.jccl.core.transport.ConnectionSetup;
import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;
import io.jccl.spi.CollComm;
import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;
import io.jccl.spi.discovery.NetPluginDiscovery;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Sets up CollNet at init (NCCL's {@code ncclCollNetSetup}), collectively on every rank: the
 * first rank of each host (its head) finds a CollNet transport with a device and listens; all
 * ranks exchange the heads' handles and verdicts through the bootstrap; if every head can, the
 * heads connect, learn which (type, op) pairs every head's transport reduces, register their
 * staging buffers, and each host's other ranks connect to their head. Any head that cannot turns
 * CollNet off for all, with one line saying why, and the communicator runs without it.
 */
final class CollNetSetup {
    /** Bootstrap tag of the connections between a host's ranks and its head. */
    private static final int COLLNET_TAG = 1300;

    private CollNetSetup() {
    }

    /** What {@link #connect} needs from the communicator under construction. */
    record Context(int rank, int nranks, String[] hostIds, Bootstrap bootstrap, NetPlugin net, int device,
                   int chunkBytes, Arena arena, Duration timeout, NetLogger log, NetPluginDiscovery discovery,
                   boolean[] sameHost) {
    }

    /**
     * @param made receives the connections made, for the proxy
     * @return this rank's CollNet part, or null when CollNet is off (decided alike on every rank)
     */
    static CollNetLinks connect(Context c, List<Connection> made) {
        int[] headOf = new int[c.nranks()];
        List<Integer> heads = new ArrayList<>();
        for (int r = 0; r < c.nranks(); r++) {
            headOf[r] = r;
            for (int q = 0; q < r; q++) {
                if (c.hostIds()[q].equals(c.hostIds()[r])) {
                    headOf[r] = headOf[q];
                    break;
                }
            }
            if (headOf[r] == r) {
                heads.add(r);
            }
        }
        if (heads.size() < 2) {
            c.log().info(LogSubsystem.INIT, "rank %d: CollNet off: all %d ranks are on one host", c.rank(), c.nranks());
            return null;
        }
        boolean head = headOf[c.rank()] == c.rank();
        CollNetPlugin plugin = null;
        ListenComm listen = null;
        NetHandle handle = NetHandle.allocate();
        long support = 0;
        String problem = null;
        if (head) {
            try {
                plugin = findPlugin(c);
                if (plugin == null) {
                    problem = "no CollNet transport with a device";
                } else {
                    listen = plugin.listen(0, handle);
                    support = supportMask(plugin);
                }
            } catch (NetException | RuntimeException e) {
                problem = (plugin == null ? "CollNet" : plugin.name()) + ": " + e.getMessage();
            }
        }
        byte[][] all = c.bootstrap().allGather(verdict(problem, support, handle));
        long agreed = -1L;
        String why = null;
        for (int h : heads) {
            ByteBuffer b = ByteBuffer.wrap(all[h]);
            boolean ok = b.get() == 1;
            long mask = b.getLong();
            if (!ok && why == null) {
                byte[] text = new byte[b.getInt()];
                b.position(9 + 4 + NetHandle.SIZE);
                b.get(text);
                why = "rank " + h + " (head of its host): " + new String(text, StandardCharsets.UTF_8);
            }
            agreed &= mask;
        }
        if (why != null) {
            closeQuietly(plugin, listen, null, null, null);
            c.log().info(LogSubsystem.INIT, "rank %d: CollNet off: %s", c.rank(), why);
            return null;
        }
        CollComm comm = null;
        if (head) {
            NetHandle[] handles = new NetHandle[heads.size()];
            for (int i = 0; i < handles.length; i++) {
                handles[i] = NetHandle.fromBytes(java.util.Arrays.copyOfRange(all[heads.get(i)], 13, 13 + NetHandle.SIZE));
            }
            try {
                comm = plugin.connect(handles, heads.indexOf(c.rank()), listen);
            } catch (NetException | RuntimeException e) {
                problem = plugin.name() + " connect: " + e.getMessage();
            }
            closeQuietly(null, listen, plugin, null, null);
        }
        byte[][] connected = c.bootstrap().allGather(new byte[] {(byte) (problem == null ? 1 : 0)});
        for (int h : heads) {
            if (connected[h][0] != 1) {
                closeQuietly(plugin, null, plugin, comm, null);
                c.log().info(LogSubsystem.INIT, "rank %d: CollNet off: rank %d could not connect its CollNet comm%s",
                        c.rank(), h, h == c.rank() ? " (" + problem + ")" : "");
                return null;
            }
        }
        MemorySegment stage = null;
        MemoryHandle stageHandle = null;
        if (head) {
            stage = c.arena().allocate((long) Connection.STEPS * c.chunkBytes(), 4096);
            try {
                stageHandle = plugin.regMr(comm, stage, PointerType.HOST);
            } catch (NetException e) {
                closeQuietly(plugin, null, plugin, comm, null);
                throw new JcclException(e.result(), JcclException.NO_RANK, "rank " + c.rank() + ": " + plugin.name()
                        + " cannot register the CollNet staging buffer: " + e.getMessage(), e);
            }
        }
        // The host's other ranks and their head: one connection each way.
        List<ConnectionSetup.Request> requests = new ArrayList<>();
        List<Integer> members = new ArrayList<>();
        for (int r = 0; r < c.nranks(); r++) {
            if (r != c.rank() && headOf[r] == c.rank()) {
                members.add(r);
            }
        }
        if (head) {
            for (int m : members) {
                requests.add(new ConnectionSetup.Request(m, false, c.device(), c.chunkBytes(), COLLNET_TAG,
                        "CollNet recv from host member " + m, c.sameHost()[m]));
                requests.add(new ConnectionSetup.Request(m, true, c.device(), c.chunkBytes(), COLLNET_TAG,
                        "CollNet send to host member " + m, c.sameHost()[m]));
            }
        } else {
            int h = headOf[c.rank()];
            requests.add(new ConnectionSetup.Request(h, true, c.device(), c.chunkBytes(), COLLNET_TAG,
                    "CollNet send to host head " + h, c.sameHost()[h]));
            requests.add(new ConnectionSetup.Request(h, false, c.device(), c.chunkBytes(), COLLNET_TAG,
                    "CollNet recv from host head " + h, c.sameHost()[h]));
        }
        List<Connection> local = requests.isEmpty() ? List.of()
                : ConnectionSetup.establish(requests, c.net(), c.bootstrap(), c.arena(), c.timeout(), c.log());
        made.addAll(local);
        SendConnection toHead = null;
        RecvConnection fromHead = null;
        SendConnection[] toMembers = new SendConnection[head ? members.size() : 0];
        RecvConnection[] fromMembers = new RecvConnection[head ? members.size() : 0];
        if (head) {
            for (int i = 0; i < members.size(); i++) {
                fromMembers[i] = (RecvConnection) local.get(2 * i);
                toMembers[i] = (SendConnection) local.get(2 * i + 1);
            }
            c.log().info(LogSubsystem.INIT, "rank %d: CollNet through %s with %d hosts; this rank is its host's head "
                    + "for %s", c.rank(), plugin.name(), heads.size(), members);
        } else {
            toHead = (SendConnection) local.get(0);
            fromHead = (RecvConnection) local.get(1);
        }
        return new CollNetLinks(plugin, comm, stage, stageHandle, c.chunkBytes(), c.nranks(), agreed, toHead, fromHead,
                toMembers, fromMembers);
    }

    private static CollNetPlugin findPlugin(Context c) {
        for (CollNetPlugin p : c.discovery().collNetPlugins()) {
            try {
                p.init(c.log());
                if (p.devices() > 0) {
                    return p;
                }
                p.close();
            } catch (NetException | RuntimeException e) {
                c.log().info(LogSubsystem.INIT, "rank %d: CollNet transport %s unusable: %s", c.rank(), p.name(),
                        e.getMessage());
            }
        }
        return null;
    }

    /** @return the pairs the transport reduces, as {@link CollNetLinks#bit} bits */
    private static long supportMask(CollNetPlugin plugin) throws NetException {
        long mask = 0;
        for (DataType t : DataType.values()) {
            for (ReduceOp op : List.of(ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN)) {
                if (plugin.reduceSupport(t, op)) {
                    mask |= CollNetLinks.bit(t, op);
                }
            }
        }
        return mask;
    }

    /** ok (1 byte), support mask (8), text length (4), the handle (128), the text. */
    private static byte[] verdict(String problem, long support, NetHandle handle) {
        byte[] text = problem == null ? new byte[0] : problem.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(1 + 8 + 4 + NetHandle.SIZE + text.length);
        b.put((byte) (problem == null ? 1 : 0)).putLong(support).putInt(text.length).put(handle.toByteArray()).put(text);
        return b.array();
    }

    /** Closes what a head set up; each argument may be null. */
    private static void closeQuietly(CollNetPlugin plugin, ListenComm listen, CollNetPlugin owner, CollComm comm,
                                     MemoryHandle registration) {
        CollNetPlugin p = owner != null ? owner : plugin;
        if (p == null) {
            return;
        }
        try {
            if (listen != null) {
                p.closeListen(listen);
            }
            if (registration != null && comm != null) {
                p.deregMr(comm, registration);
            }
            if (comm != null) {
                p.closeColl(comm);
            }
            if (plugin != null) {
                p.close();
            }
        } catch (NetException | RuntimeException e) {
            // Closing CollNet is best effort: the communicator runs (or ends) without it either way.
        }
    }

    /** Releases a head's CollNet comm, registration and transport at the communicator's close. */
    static void close(CollNetLinks links) {
        if (links != null && links.isHead()) {
            closeQuietly(links.plugin(), null, links.plugin(), links.comm(), links.stageHandle());
        }
    }
}
