package io.jccl.shim;

import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.PointerType;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.EnvVar;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.jccl.shim.ShimAbi.LONG;
import static io.jccl.shim.ShimAbi.INT;
import static io.jccl.shim.ShimAbi.NetOp;

/**
 * Runs the transport's data path over loopback connections of its own, on a thread of its own,
 * while NCCL sets its communicator up, so that the JIT has compiled {@code isend}, {@code irecv} and
 * {@code test} before NCCL's first message.
 *
 * <p>Why: the JVM the shim starts runs that code interpreted at first. Measured with
 * {@code jccl-shim-driver LIBRARY warmup N} on the 2-core build machine, an 8-byte send and receive
 * took 65 to 95 us a round on average over rounds 101 to 1000 and 19 to 34 us over the next 9000,
 * against 8 us from round 10 000 on; nccl-tests' default run (5 warm-up and 20 timed iterations a
 * size) times that cold code at its small sizes.
 *
 * <p>The rounds go through the upcall stubs that NCCL's calls enter (downcalls to the stubs'
 * addresses), so that the JIT compiles the bridge's methods as NCCL reaches them, not inlined into a
 * loop of this class. Mostly 8-byte messages, every 32nd of 64 KiB and every 512th of 512 KiB (one
 * of NCCL's steps), so that the striped path is compiled too. Only in a JVM the shim started itself
 * (a Java program that hosts the shim has its own warm-up), once per process, and never in NCCL's
 * way: it opens no context (a context's finalize is a communicator's to the bridge), it ends at
 * NCCL's first message (so that it never competes with NCCL's traffic), a failure ends it with one
 * INFO line, and the finalize of NCCL's last communicator stops it and waits for it, so that the
 * leak check there sees none of its comms.
 */
@SuppressWarnings("restricted") // FFM by design: downcalls to the shim's own upcall stubs
final class ShimWarmup implements Runnable {
    @EnvVar(defaultValue = "20000",
            description = "Rounds of loopback sends and receives (mostly 8 bytes) that the native shim runs through "
                    + "its own data path on a thread of its own after NCCL's first init, so that the JVM has compiled "
                    + "it before NCCL's first message (cold, an 8-byte round took 2 to 12 times as long); only in a "
                    + "JVM the shim started, once per process; it ends at NCCL's first message. 0: off.")
    public static final String JCCL_SHIM_WARMUP = "JCCL_SHIM_WARMUP";

    static final int DEFAULT_ROUNDS = 20_000;
    /** A bound on the whole warm-up and on each wait in it: it must never hold NCCL up. */
    static final long DEADLINE_NS = 30_000_000_000L;
    private static final long JOIN_MS = 10_000;
    private static final long BUFFER_BYTES = 512 << 10;
    private static final int TAG = 0x5741; // "WA"
    /** Connections the rounds go over, one after another. */
    static final int CONNECTIONS = 8;

    /** Once per process: a reloaded library's second bridge finds the JIT already warm. */
    private static final AtomicBoolean STARTED = new AtomicBoolean();

    private final Map<NetOp, MethodHandle> ops = new EnumMap<>(NetOp.class);
    private final NetLogger logger;
    private final int rounds;
    private volatile boolean stop;
    /** Why the rounds were told to stop: NCCL's first message, or its last finalize. */
    private volatile String stopReason = "";
    private final Runnable onEnd;
    private volatile Thread thread;
    /** Rounds done, and the nanoseconds of the last 1000 of them, for the closing line. */
    private int done;
    private long lastThousandNs;

    /** The three calls of every round, invoked exactly (the others go through {@link #call}). */
    private final MethodHandle isend;
    private final MethodHandle irecv;
    private final MethodHandle testCall;

    private ShimWarmup(Map<NetOp, MemorySegment> stubs, NetLogger logger, int rounds, Runnable onEnd) {
        this.onEnd = onEnd;
        Linker linker = Linker.nativeLinker();
        stubs.forEach((op, stub) -> ops.put(op, linker.downcallHandle(stub, op.descriptor)));
        this.isend = ops.get(NetOp.ISEND);
        this.irecv = ops.get(NetOp.IRECV);
        this.testCall = ops.get(NetOp.TEST);
        this.logger = logger;
        this.rounds = rounds;
    }

    /**
     * @return the rounds {@link #JCCL_SHIM_WARMUP} asks for
     * @throws IllegalArgumentException for a value that is not a count of rounds
     */
    static int configuredRounds() {
        String v = Env.get(JCCL_SHIM_WARMUP);
        if (v == null || v.isBlank()) {
            return DEFAULT_ROUNDS;
        }
        try {
            int n = Integer.parseInt(v.strip());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(JCCL_SHIM_WARMUP + "=" + v + ": not a number of rounds (0 or more; 0 turns "
                + "the warm-up off)");
    }

    /**
     * A warm-up, if this process has not had one and the shim started this JVM; {@link #begin} starts
     * it, once the caller holds it (so that {@code onEnd} never runs before the caller stored it).
     *
     * @param stubs the upcall stubs NCCL's calls enter, by operation; empty where the bridge was made
     *              without them (tests), which means no warm-up
     * @param onEnd run on the warm-up's thread when it has ended and closed what it opened
     * @return the warm-up, not yet started, or {@code null}
     */
    static ShimWarmup create(Map<NetOp, MemorySegment> stubs, NetLogger logger, int rounds, Runnable onEnd) {
        if (rounds == 0 || stubs.isEmpty() || System.getProperty(ShimBridge.LIBRARY_PROPERTY) == null
                || !STARTED.compareAndSet(false, true)) {
            return null;
        }
        ShimWarmup w = new ShimWarmup(stubs, logger, rounds, onEnd);
        Thread t = new Thread(w, "jccl-shim-warmup");
        t.setDaemon(true);
        w.thread = t;
        return w;
    }

    /** Starts the rounds on the warm-up's own thread. */
    void begin() {
        thread.start();
    }

    /**
     * NCCL moves its first message (a data call on a thread other than the warm-up's): the rounds
     * end after the one under way, so that they never compete with NCCL's traffic for the cores or the
     * loopback path. What they ran by then is compiled or queued for the compiler.
     */
    void ncclDataCall() {
        Thread t = thread;
        if (t != null && t != Thread.currentThread() && !stop) {
            stopReason = "stopped at NCCL's first message";
            stop = true;
        }
    }

    /** Stops the rounds and waits (bounded) until the warm-up has closed what it opened. */
    void stopAndJoin() {
        Thread t = thread;
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        if (!stop) {
            stopReason = "stopped by NCCL's finalize";
        }
        stop = true;
        try {
            t.join(JOIN_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            logger.warn("NET/JCCL: the warm-up thread did not end within %d ms of finalize", JOIN_MS);
        }
    }

    @Override
    public void run() {
        long start = System.nanoTime();
        logger.info(LogSubsystem.INIT | LogSubsystem.NET, "NET/JCCL: warm-up: %d loopback rounds start", rounds);
        String ended;
        try (Arena arena = Arena.ofConfined()) {
            ended = exchange(arena, start + DEADLINE_NS);
        } catch (Throwable e) {
            ended = "failed: " + e;
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        logger.info(LogSubsystem.INIT | LogSubsystem.NET, "NET/JCCL: warm-up: %d of %d loopback rounds in %d ms%s%s "
                + "(%s=0 turns it off)", done, rounds, ms,
                done >= 2000 ? String.format(", the last 1000 at %.1f us a round", lastThousandNs / 1000 / 1000.0) : "",
                ended.isEmpty() ? "" : ", " + ended, JCCL_SHIM_WARMUP);
        thread = null;
        onEnd.run();
    }

    /** Native scratch of the warm-up: out-parameters, the handle, the buffers, irecv's arrays of one. */
    private static final class Scratch {
        final long listenOut;
        final long sendOut;
        final long recvOut;
        final long smhOut;
        final long rmhOut;
        final long requestOut;
        final long doneOut;
        final long handle;
        final long src;
        final long dst;
        /** irecv's arrays of one: data pointer, size (size_t), tag, memory handle. */
        final long data;
        final long sizes;
        final long tags;
        final long mhandles;

        Scratch(Arena arena) {
            long out = arena.allocate(7 * 8, 8).address();
            listenOut = out;
            sendOut = out + 8;
            recvOut = out + 16;
            smhOut = out + 24;
            rmhOut = out + 32;
            requestOut = out + 40;
            doneOut = out + 48;
            handle = arena.allocate(NetHandle.SIZE, 8).address();
            src = arena.allocate(BUFFER_BYTES, 4096).address();
            dst = arena.allocate(BUFFER_BYTES, 4096).address();
            data = arena.allocate(32, 8).address();
            sizes = data + 8;
            tags = data + 16;
            mhandles = data + 24;
        }
    }

    /** One loopback connection's comms and registrations; 0 where not (yet) open. */
    private static final class Pair {
        long listen;
        long send;
        long recv;
        long smh;
        long rmh;
    }

    /**
     * The rounds, over {@link #CONNECTIONS} connections in turn: code that runs once per new comm
     * (its first receive, its first request slot) then runs while the JIT profiles it, not only before,
     * so that C2 does not compile it away and trap on NCCL's first comms.
     *
     * @return why the rounds ended early, or ""
     */
    private String exchange(Arena arena, long deadline) throws Throwable {
        Scratch x = new Scratch(arena);
        // No context of its own (listen and connect get 0): NCCL's init already set the transport up,
        // and the bridge reads a context's finalize as a communicator's (the last one releases the
        // transport), while NCCL before 2.28 (ncclNet v6 to v10) has no contexts and never finalizes.
        long thousand = System.nanoTime();
        int perConnection = Math.max(1, (rounds + CONNECTIONS - 1) / CONNECTIONS);
        while (done < rounds) {
            Pair p = new Pair();
            try {
                String failed = open(p, x, deadline);
                if (failed != null) {
                    return failed;
                }
                int last = Math.min(rounds, done + perConnection);
                while (done < last) {
                    if (stop) {
                        return stopReason;
                    }
                    int i = done + 1;
                    long size = i % 512 == 0 ? BUFFER_BYTES : i % 32 == 0 ? 64 << 10 : 8;
                    failed = round(p, x, size, deadline);
                    if (failed != null) {
                        return failed;
                    }
                    done = i;
                    if (i % 1000 == 0) {
                        long now = System.nanoTime();
                        lastThousandNs = now - thousand;
                        thousand = now;
                    }
                }
            } finally {
                close(p);
            }
        }
        return "";
    }

    /** Listens, connects, accepts and registers both buffers, as NCCL does. @return why it failed, or null */
    private String open(Pair p, Scratch x, long deadline) throws Throwable {
        if (call(NetOp.LISTEN, 0L, 0, x.handle, x.listenOut) != 0) {
            return "listen failed";
        }
        p.listen = at(x.listenOut);
        ShimAbi.MEMORY.set(LONG, x.sendOut, 0L);
        ShimAbi.MEMORY.set(LONG, x.recvOut, 0L);
        while (p.send == 0 || p.recv == 0) {
            if (p.send == 0 && call(NetOp.CONNECT, 0L, 0, x.handle, x.sendOut) != 0
                    || p.recv == 0 && call(NetOp.ACCEPT, p.listen, x.recvOut) != 0) {
                return "connect failed";
            }
            p.send = at(x.sendOut);
            p.recv = at(x.recvOut);
            if (over(deadline) || stop) {
                return stop ? stopReason : "no connection within the bound";
            }
        }
        if (call(NetOp.REG_MR, p.send, x.src, BUFFER_BYTES, PointerType.HOST.mask(), x.smhOut) != 0) {
            return "regMr failed";
        }
        p.smh = at(x.smhOut);
        if (call(NetOp.REG_MR, p.recv, x.dst, BUFFER_BYTES, PointerType.HOST.mask(), x.rmhOut) != 0) {
            return "regMr failed";
        }
        p.rmh = at(x.rmhOut);
        // Every receive takes a whole buffer, whatever the message, as NCCL posts its steps' slots:
        // the receiver then batches its CTS frames and the sender goes EAGER, as under NCCL.
        ShimAbi.MEMORY.set(LONG, x.data, x.dst);
        ShimAbi.MEMORY.set(LONG, x.sizes, BUFFER_BYTES);
        ShimAbi.MEMORY.set(INT, x.tags, TAG);
        ShimAbi.MEMORY.set(LONG, x.mhandles, p.rmh);
        return null;
    }

    /** Closes what {@link #open} opened, whatever happened since, as NCCL would. */
    private void close(Pair p) throws Throwable {
        if (p.rmh != 0) {
            call(NetOp.DEREG_MR, p.recv, p.rmh);
        }
        if (p.smh != 0) {
            call(NetOp.DEREG_MR, p.send, p.smh);
        }
        if (p.send != 0) {
            call(NetOp.CLOSE_SEND, p.send);
        }
        if (p.recv != 0) {
            call(NetOp.CLOSE_RECV, p.recv);
        }
        if (p.listen != 0) {
            call(NetOp.CLOSE_LISTEN, p.listen);
        }
    }

    /** One message: a receive posted, the send posted, both tested until done. @return why it failed, or null */
    private String round(Pair p, Scratch x, long size, long deadline) throws Throwable {
        long rreq = 0;
        while (rreq == 0) {
            if ((int) irecv.invokeExact(p.recv, 1, x.data, x.sizes, x.tags, x.mhandles, x.requestOut) != 0) {
                return "irecv failed";
            }
            rreq = at(x.requestOut);
            if (over(deadline)) {
                return "irecv not accepted within the bound";
            }
        }
        long sreq = 0;
        boolean recvDone = false;
        while (sreq == 0) {
            if ((int) isend.invokeExact(p.send, x.src, size, TAG, p.smh, x.requestOut) != 0) {
                return "isend failed";
            }
            sreq = at(x.requestOut);
            if (sreq == 0) {
                recvDone = test(rreq, x.doneOut);
            }
            if (over(deadline)) {
                return "isend not accepted within the bound";
            }
        }
        // A send done inside isend comes back as a DONE_SEND handle, which the C half answers.
        boolean sendDone = HandleTable.tagged(sreq, HandleTable.Kind.DONE_SEND);
        while (!sendDone || !recvDone) {
            if (!sendDone) {
                sendDone = test(sreq, x.doneOut);
            }
            if (!recvDone) {
                recvDone = test(rreq, x.doneOut);
            }
            if (over(deadline) || stop) {
                return stop ? stopReason + ", a round cut short" : "a round did not complete within the bound";
            }
        }
        return null;
    }

    private boolean test(long request, long doneOut) throws Throwable {
        if ((int) testCall.invokeExact(request, doneOut, 0L) != 0) {
            throw new IllegalStateException("test failed");
        }
        return ShimAbi.MEMORY.get(INT, doneOut) != 0;
    }

    private static boolean over(long deadline) {
        return System.nanoTime() - deadline > 0;
    }

    private static long at(long address) {
        return ShimAbi.MEMORY.get(LONG, address);
    }

    private int call(NetOp op, Object... args) throws Throwable {
        return (int) ops.get(op).invokeWithArguments(args);
    }
}
