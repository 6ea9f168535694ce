package io.jccl.tck.internal.net;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.tck.TckSettings;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.BoundedCall;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.Threads;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Everything a point-to-point rule works with: the transport under test (initialised), the
 * settings, timed data-path calls, connections, buffers and seeds.
 *
 * <p>Rules use device 0 for traffic; the property rules look at every device.
 */
public final class NetKit {
    /** The device every connection of the kit uses. */
    public static final int DEV = 0;

    private final NetPlugin plugin;
    private final TckSettings settings;
    private MemorySegment sendArea = MemorySegment.NULL;
    private MemorySegment recvArea = MemorySegment.NULL;

    public NetKit(NetPlugin plugin, TckSettings settings) {
        this.plugin = plugin;
        this.settings = settings;
    }

    public NetPlugin plugin() {
        return plugin;
    }

    public TckSettings settings() {
        return settings;
    }

    /** @return device 0's properties */
    public NetProperties properties() throws NetException {
        return plugin.getProperties(DEV);
    }

    /** @return a random source for one rule, reproducible from the run's seed */
    public SplittableRandom random(String rule) {
        return new SplittableRandom(settings.seed() ^ rule.hashCode() * 0x9E3779B97F4A7C15L);
    }

    /** @return the pattern seed of message {@code index} of a rule */
    public long seed(String rule, long index) {
        return settings.seed() ^ (rule.hashCode() * 0xC2B2AE3D27D4EB4FL) ^ (index * 0x165667B19E3779F9L);
    }

    /** @return {@code bytes} of zeroed native memory, page-aligned, freed by the GC once unreachable */
    public static MemorySegment allocate(long bytes) {
        return Arena.ofAuto().allocate(Math.max(1, bytes), 4096).asSlice(0, bytes);
    }

    /**
     * @return at least {@code bytes} of the kit's send area: one allocation grown on demand and
     *         reused by every rule, so the 256 MiB messages cost one allocation per run
     */
    public MemorySegment sendArea(long bytes) {
        if (sendArea.byteSize() < bytes) {
            sendArea = MemorySegment.NULL; // lets the GC free the smaller area before the larger one is allocated
            sendArea = allocate(bytes);
        }
        return sendArea.asSlice(0, bytes);
    }

    /** @return at least {@code bytes} of the kit's receive area, as {@link #sendArea} */
    public MemorySegment recvArea(long bytes) {
        if (recvArea.byteSize() < bytes) {
            recvArea = MemorySegment.NULL; // as in sendArea
            recvArea = allocate(bytes);
        }
        return recvArea.asSlice(0, bytes);
    }

    // ---------------------------------------------------------------------------------------------
    // Data-path calls, timed: none may block.

    private void checkDuration(String call, long startNanos) {
        long took = System.nanoTime() - startNanos;
        if (took > settings.callBound().toNanos()) {
            fail(call + " took " + Deadline.format(Duration.ofNanos(took)) + " (bound " + Deadline.format(
                    settings.callBound()) + "): data-path calls must never block (spec 5.9 to 5.12); "
                    + "progress belongs in test(), one step per call");
        }
    }

    public NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mh) throws NetException {
        long t = System.nanoTime();
        NetRequest r = plugin.isend(comm, data, tag, mh);
        checkDuration("isend", t);
        return r;
    }

    public NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mh)
            throws NetException {
        long t = System.nanoTime();
        NetRequest r = plugin.irecv(comm, n, data, tags, mh);
        checkDuration("irecv", t);
        return r;
    }

    public NetRequest irecv(RecvComm comm, MemorySegment data, int tag, MemoryHandle mh) throws NetException {
        return irecv(comm, 1, new MemorySegment[] {data}, new int[] {tag}, new MemoryHandle[] {mh});
    }

    public boolean test(NetRequest request, int[] sizes) throws NetException {
        long t = System.nanoTime();
        boolean done = plugin.test(request, sizes);
        checkDuration("test", t);
        return done;
    }

    /** An isend, irecv or iflush to retry while it returns {@code null} (would block). */
    @FunctionalInterface
    public interface PostCall {
        NetRequest post() throws NetException;
    }

    /** @return a new, empty batch of operations on this kit */
    public Batch batch() {
        return new Batch(this);
    }

    public NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mh) throws NetException {
        long t = System.nanoTime();
        NetRequest r = plugin.iflush(comm, n, data, mh);
        checkDuration("iflush", t);
        return r;
    }

    // ---------------------------------------------------------------------------------------------
    // Connections.

    /** A listen comm and the handle it wrote. */
    public record Listener(ListenComm comm, NetHandle handle) {
    }

    /** @return a listen comm on device 0; fails the rule if listen blocks */
    public Listener listen() throws NetException {
        NetHandle handle = NetHandle.allocate();
        ListenComm comm = BoundedCall.call("listen(dev " + DEV + ")", settings.callBound(),
                "listen must not block (spec 5.5)", () -> plugin.listen(DEV, handle));
        if (comm == null) {
            fail("listen returned null: it must return a listen comm or throw (spec 5.5)");
        }
        return new Listener(comm, handle);
    }

    /** Closes a listen comm within the completion timeout. */
    public void closeListen(ListenComm comm) throws NetException {
        BoundedCall.call("closeListen", settings.completionTimeout(), "close calls must return",
                () -> {
                    plugin.closeListen(comm);
                    return null;
                });
    }

    /**
     * Opens a connection the way NCCL's service threads do: listen, then connect (called again
     * while it returns null) on a helper thread while this thread calls accept likewise, then
     * closeListen. Tolerates a connect or accept that blocks for a while, as long as the pair
     * completes within the connect timeout: rule conn.2 is the one that checks that they never
     * block.
     */
    public Link connect() throws NetException {
        Listener l = listen();
        try {
            return connect(l.comm(), l.handle());
        } finally {
            closeListen(l.comm());
        }
    }

    /** Connects to {@code listenComm} (whose handle is {@code handle}) and accepts, as {@link #connect()}. */
    public Link connect(ListenComm listenComm, NetHandle handle) throws NetException {
        AtomicReference<SendComm> sent = new AtomicReference<>();
        AtomicReference<Throwable> connectFailure = new AtomicReference<>();
        Thread connector = new Thread(() -> {
            Backoff idle = new Backoff();
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    SendComm c = plugin.connect(DEV, handle);
                    if (c != null) {
                        sent.set(c);
                        return;
                    }
                    idle.idle();
                }
            } catch (Throwable e) {
                connectFailure.set(e);
            }
        }, "jccl-tck-connect");
        connector.setDaemon(true);
        connector.start();
        Deadline deadline = Deadline.after(settings.connectTimeout());
        Backoff idle = new Backoff();
        RecvComm recv = null;
        try {
            while (recv == null || sent.get() == null) {
                if (connectFailure.get() != null) {
                    throw failure("connect", connectFailure.get());
                }
                if (recv == null) {
                    recv = plugin.accept(listenComm);
                    if (recv != null) {
                        continue;
                    }
                }
                if (deadline.expired()) {
                    fail("the connection did not complete within " + Deadline.format(deadline.budget()) + " ("
                            + (recv == null ? "accept still returned null" : "accept done") + ", "
                            + (sent.get() == null ? "connect still returned null" : "connect done")
                            + ")\nconnect thread:\n" + Threads.stackOf(connector));
                }
                idle.idle();
            }
        } finally {
            connector.interrupt();
        }
        return new Link(this, sent.get(), recv);
    }

    private static NetException failure(String call, Throwable t) {
        if (t instanceof NetException e) {
            return e;
        }
        if (t instanceof RuntimeException e) {
            throw e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new IllegalStateException(call + " threw " + t, t);
    }
}
