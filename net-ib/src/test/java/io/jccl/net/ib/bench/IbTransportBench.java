package io.jccl.net.ib.bench;

import io.jccl.net.ib.IbNetPlugin;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.spi.log.DebugLogger;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.LockSupport;

/**
 * JcclIB's throughput and latency on one comm, printed beside perftest's {@code ib_write_bw} and
 * {@code ib_write_lat} on the same device in the same run ({@link Perftest}); {@code rxe/bench.sh}
 * runs it in the SoftRoCE VM.
 *
 * <ul>
 *   <li>Throughput: one connection driven by one thread, as NCCL's proxy progress thread drives
 *       the connections of its process ({@code --threads 2}: a sender and a receiver thread): it
 *       keeps {@code --window} receives posted and as many sends in flight. Gbit/s = bytes &times; 8
 *       / (first send to last receive completion) / 10^9, as perftest's {@code --report_gbits}.</li>
 *   <li>Latency: 8-byte ping-pong between two threads over two connections, receives posted ahead;
 *       half the round trip, median ("typical", as perftest) and mean.</li>
 * </ul>
 *
 * <p>Each figure is the median of {@code --rounds} rounds, and every JcclIB round runs right after
 * a perftest round of the same size: on a shared machine (and more so under TCG) the speed drifts,
 * and interleaving keeps the ratio honest.
 *
 * <pre>
 * IbTransportBench [--window 16] [--threads 1|2] [--bytes-per-size 134217728] [--sizes 65536,...] [--rounds 3]
 *                  [--lat-iters 5000] [--lat-warmup 5000] [--warmup-bytes 268435456]
 *                  [--perftest on|off] [--gid 1]
 * </pre>
 */
public final class IbTransportBench {
    private static final long[] DEFAULT_SIZES = {64L << 10, 128L << 10, 256L << 10, 512L << 10, 1L << 20, 2L << 20,
            4L << 20, 8L << 20, 16L << 20, 32L << 20, 64L << 20};

    private final NetPlugin plugin;
    private final int window;
    private final boolean oneThread;

    private IbTransportBench(NetPlugin plugin, int window, boolean oneThread) {
        this.plugin = plugin;
        this.window = window;
        this.oneThread = oneThread;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opt = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opt.put(args[i], args[i + 1]);
        }
        int window = Integer.parseInt(opt.getOrDefault("--window", "16"));
        long bytesPerSize = Long.parseLong(opt.getOrDefault("--bytes-per-size", Long.toString(128L << 20)));
        int latIters = Integer.parseInt(opt.getOrDefault("--lat-iters", "5000"));
        int latWarmup = Integer.parseInt(opt.getOrDefault("--lat-warmup", "5000"));
        int rounds = Integer.parseInt(opt.getOrDefault("--rounds", "3"));
        long warmup = Long.parseLong(opt.getOrDefault("--warmup-bytes", Long.toString(256L << 20)));
        int gid = Integer.parseInt(opt.getOrDefault("--gid", System.getenv().getOrDefault("RXE_GID_INDEX", "1")));
        long[] sizes = opt.containsKey("--sizes")
                ? Arrays.stream(opt.get("--sizes").split(",")).mapToLong(Long::parseLong).toArray() : DEFAULT_SIZES;

        IbNetPlugin plugin = new IbNetPlugin();
        plugin.init(DebugLogger.fromEnvironment("[bench]"));
        boolean oneThread = opt.getOrDefault("--threads", "1").equals("1");
        IbTransportBench bench = new IbTransportBench(plugin, window, oneThread);
        String device = plugin.getProperties(0).name();
        Perftest perftest = Perftest.installed() && !opt.getOrDefault("--perftest", "on").equals("off")
                ? new Perftest(device.replaceAll(":.*", ""), gid) : null;
        try (Arena arena = Arena.ofShared()) {
            long max = Arrays.stream(sizes).max().orElse(1);
            List<String> rows = new ArrayList<>();
            Pair p = bench.connect();
            MemorySegment src = arena.allocate(max, 4096);
            MemorySegment dst = arena.allocate(max, 4096);
            src.fill((byte) 7);
            MemoryHandle smh = plugin.regMr(p.send, src, PointerType.HOST);
            MemoryHandle rmh = plugin.regMr(p.recv, dst, PointerType.HOST);
            bench.throughput(p, src, smh, dst, rmh, 64L << 10, (int) Math.max(16, warmup / (64L << 10))); // JIT
            for (long size : sizes) {
                int iters = (int) Math.max(16, Math.min(20_000, bytesPerSize / size));
                double[] base = new double[rounds];
                double[] ours = new double[rounds];
                for (int r = 0; r < rounds; r++) { // interleaved, so that both see the same machine
                    base[r] = perftest == null ? Double.NaN : perftest.writeBandwidth(size, iters);
                    ours[r] = bench.throughput(p, src, smh, dst, rmh, size, iters);
                    System.err.printf(Locale.ROOT, "bench: %s x %d round %d: ib_write_bw %.3f, JcclIB %.3f Gbit/s%n",
                            human(size), iters, r + 1, base[r], ours[r]);
                }
                double b = median(base);
                double o = median(ours);
                rows.add(String.format(Locale.ROOT, "| %s | %d | %s | %.3f | %s |", human(size), iters,
                        Double.isNaN(b) ? "-" : String.format(Locale.ROOT, "%.3f", b), o,
                        Double.isNaN(b) ? "-" : String.format(Locale.ROOT, "%.2f", o / b)));
            }
            double[] baseTyp = new double[rounds];
            double[] baseAvg = new double[rounds];
            double[] ourTyp = new double[rounds];
            double[] ourAvg = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                double[] b = perftest == null ? new double[] {Double.NaN, Double.NaN} : perftest.writeLatency(latIters);
                double[] o = bench.latency(latIters, latWarmup);
                baseTyp[r] = b[0];
                baseAvg[r] = b[1];
                ourTyp[r] = o[0];
                ourAvg[r] = o[1];
                System.err.printf(Locale.ROOT, "bench: 8 B latency round %d: ib_write_lat %.2f/%.2f, JcclIB %.2f/%.2f us%n",
                        r + 1, b[0], b[1], o[0], o[1]);
            }
            System.out.println();
            System.out.printf(Locale.ROOT, "JcclIB on %s, one comm driven by %s, window %d; medians of %d interleaved "
                    + "rounds (perftest on the same device, same run)%n%n", device, oneThread ? "one thread"
                    : "a sender and a receiver thread", window, rounds);
            System.out.println("| message | iterations | ib_write_bw Gbit/s | JcclIB Gbit/s | ratio |");
            System.out.println("|---|---|---|---|---|");
            rows.forEach(System.out::println);
            System.out.println();
            System.out.println("| 8-byte latency (half round trip) | ib_write_lat | JcclIB | ratio |");
            System.out.println("|---|---|---|---|");
            latencyRow("typical (median), us", median(baseTyp), median(ourTyp));
            latencyRow("average, us", median(baseAvg), median(ourAvg));
            plugin.deregMr(p.send, smh);
            plugin.deregMr(p.recv, rmh);
            plugin.closeSend(p.send);
            plugin.closeRecv(p.recv);
            plugin.closeListen(p.listen);
        } finally {
            plugin.close();
        }
    }

    private static void latencyRow(String what, double base, double ours) {
        System.out.printf(Locale.ROOT, "| %s | %s | %.2f | %s |%n", what,
                Double.isNaN(base) ? "-" : String.format(Locale.ROOT, "%.2f", base), ours,
                Double.isNaN(base) ? "-" : String.format(Locale.ROOT, "%.2f", ours / base));
    }

    private static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v); // NaN sorts last
        int n = 0;
        while (n < v.length && !Double.isNaN(v[n])) {
            n++;
        }
        return n == 0 ? Double.NaN : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }

    private record Pair(SendComm send, RecvComm recv, ListenComm listen) {
    }

    private Pair connect() throws NetException {
        NetHandle handle = NetHandle.allocate();
        ListenComm listen = plugin.listen(0, handle);
        SendComm send = null;
        RecvComm recv = null;
        while (send == null || recv == null) {
            if (send == null) {
                send = plugin.connect(0, handle);
            }
            if (recv == null) {
                recv = plugin.accept(listen);
            }
        }
        return new Pair(send, recv, listen);
    }

    /**
     * Spin a little, then park for longer and longer (up to {@code bench.maxParkNanos}): the bench
     * threads and SoftRoCE's kernel work share two CPUs, and every cycle a waiting thread burns is
     * taken from the adapter. With 16 messages in flight a thread can sleep far longer than it
     * takes to refill its window.
     */
    private static final class Idle {
        private static final int SPINS = Integer.getInteger("bench.spins", 50);
        private static final long MIN_PARK_NANOS = Long.getLong("bench.minParkNanos", 10_000);
        private static final long MAX_PARK_NANOS = Long.getLong("bench.maxParkNanos", 1_000_000);
        private int idle;
        private long park = MIN_PARK_NANOS;

        void reset() {
            idle = 0;
            park = MIN_PARK_NANOS;
        }

        void idle() {
            if (++idle < SPINS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(park);
                park = Math.min(MAX_PARK_NANOS, park * 2);
            }
        }
    }

    /** @return Gbit/s of {@code iters} messages of {@code size} bytes */
    private double throughput(Pair p, MemorySegment src, MemoryHandle smh, MemorySegment dst, MemoryHandle rmh,
            long size, int iters) throws Exception {
        return oneThread ? throughputOneThread(p, src, smh, dst, rmh, size, iters)
                : throughputTwoThreads(p, src, smh, dst, rmh, size, iters);
    }

    /**
     * One thread drives both ends, as NCCL's proxy progress thread drives every connection of its
     * process: it keeps {@code window} receives posted and {@code window} sends in flight.
     */
    private double throughputOneThread(Pair p, MemorySegment src, MemoryHandle smh, MemorySegment dst,
            MemoryHandle rmh, long size, int iters) throws Exception {
        MemorySegment[] bufs = {dst.asSlice(0, size)};
        MemoryHandle[] mhs = {rmh};
        int[] tags = {0};
        MemorySegment data = src.asSlice(0, size);
        NetRequest[] recvs = new NetRequest[window];
        NetRequest[] sends = new NetRequest[window];
        int posted = 0;
        int received = 0;
        int sent = 0;
        int sendsDone = 0;
        Idle idle = new Idle();
        long t0 = System.nanoTime();
        while (received < iters || sendsDone < iters) {
            boolean progress = false;
            while (posted < iters && posted - received < window) {
                NetRequest r = plugin.irecv(p.recv, 1, bufs, tags, mhs);
                if (r == null) {
                    break;
                }
                recvs[posted++ % window] = r;
                progress = true;
            }
            while (sent < iters && sent - sendsDone < window) {
                NetRequest s = plugin.isend(p.send, data, 0, smh);
                if (s == null) {
                    break;
                }
                sends[sent++ % window] = s;
                progress = true;
            }
            while (sendsDone < sent && plugin.test(sends[sendsDone % window], null)) {
                sendsDone++;
                progress = true;
            }
            while (received < posted && plugin.test(recvs[received % window], null)) {
                received++;
                progress = true;
            }
            if (progress) {
                idle.reset();
            } else {
                idle.idle();
            }
        }
        return (double) size * iters * 8 / (System.nanoTime() - t0);
    }

    /** A sender thread and a receiver thread, each with its end of the connection. */
    private double throughputTwoThreads(Pair p, MemorySegment src, MemoryHandle smh, MemorySegment dst,
            MemoryHandle rmh, long size, int iters) throws Exception {
        CyclicBarrier start = new CyclicBarrier(2);
        long[] endNanos = new long[1];
        Exception[] failure = new Exception[1];
        Thread receiver = Thread.ofPlatform().name("bench-recv").start(() -> {
            try {
                MemorySegment[] bufs = {dst.asSlice(0, size)};
                MemoryHandle[] mhs = {rmh};
                int[] tags = {0};
                NetRequest[] ring = new NetRequest[window];
                int posted = 0;
                int done = 0;
                Idle idle = new Idle();
                start.await();
                while (done < iters) {
                    boolean progress = false;
                    while (posted < iters && posted - done < window) {
                        NetRequest r = plugin.irecv(p.recv, 1, bufs, tags, mhs);
                        if (r == null) {
                            break;
                        }
                        ring[posted++ % window] = r;
                        progress = true;
                    }
                    if (plugin.test(ring[done % window], null)) {
                        done++;
                        progress = true;
                    }
                    if (progress) {
                        idle.reset();
                    } else {
                        idle.idle();
                    }
                }
                endNanos[0] = System.nanoTime();
            } catch (Exception e) {
                failure[0] = e;
            }
        });
        MemorySegment data = src.asSlice(0, size);
        NetRequest[] ring = new NetRequest[window];
        int sent = 0;
        int done = 0;
        Idle idle = new Idle();
        start.await();
        long t0 = System.nanoTime();
        while (done < iters) {
            boolean progress = false;
            while (sent < iters && sent - done < window) {
                NetRequest r = plugin.isend(p.send, data, 0, smh);
                if (r == null) {
                    break;
                }
                ring[sent++ % window] = r;
                progress = true;
            }
            if (done < sent && plugin.test(ring[done % window], null)) {
                done++;
                progress = true;
            }
            if (progress) {
                idle.reset();
            } else {
                idle.idle();
            }
        }
        receiver.join();
        if (failure[0] != null) {
            throw failure[0];
        }
        return (double) size * iters * 8 / (endNanos[0] - t0);
    }

    /** @return {median, mean} of half round trips, in microseconds */
    private double[] latency(int iters, int warm) throws Exception {
        Pair ab = connect(); // fresh connections: each round ends with receives still posted
        Pair ba = connect();
        Arena arena = Arena.ofShared();
        MemorySegment aBuf = arena.allocate(4096, 4096);
        MemorySegment bBuf = arena.allocate(4096, 4096);
        MemoryHandle aSend = plugin.regMr(ab.send, aBuf, PointerType.HOST);
        MemoryHandle aRecv = plugin.regMr(ba.recv, aBuf, PointerType.HOST);
        MemoryHandle bRecv = plugin.regMr(ab.recv, bBuf, PointerType.HOST);
        MemoryHandle bSend = plugin.regMr(ba.send, bBuf, PointerType.HOST);
        int total = warm + iters;
        long[] half = new long[iters];
        CyclicBarrier start = new CyclicBarrier(2);
        Exception[] failure = new Exception[1];
        Thread pong = Thread.ofPlatform().name("bench-pong").start(() -> {
            try {
                MemorySegment[] bufs = {bBuf.asSlice(0, 8)};
                MemoryHandle[] mhs = {bRecv};
                int[] tags = {0};
                NetRequest r = plugin.irecv(ab.recv, 1, bufs, tags, mhs);
                start.await();
                for (int i = 0; i < total; i++) {
                    while (!plugin.test(r, null)) {
                        Thread.onSpinWait();
                    }
                    NetRequest s;
                    while ((s = plugin.isend(ba.send, bBuf.asSlice(0, 8), 0, bSend)) == null) {
                        Thread.onSpinWait();
                    }
                    r = plugin.irecv(ab.recv, 1, bufs, tags, mhs); // the answer first, then the next receive
                    while (!plugin.test(s, null)) {
                        Thread.onSpinWait();
                    }
                }
            } catch (Exception e) {
                failure[0] = e;
            }
        });
        MemorySegment[] bufs = {aBuf.asSlice(0, 8)};
        MemoryHandle[] mhs = {aRecv};
        int[] tags = {0};
        NetRequest r = plugin.irecv(ba.recv, 1, bufs, tags, mhs);
        start.await();
        for (int i = 0; i < total && failure[0] == null; i++) {
            long t0 = System.nanoTime();
            NetRequest s;
            while ((s = plugin.isend(ab.send, aBuf.asSlice(0, 8), 0, aSend)) == null) {
                Thread.onSpinWait();
            }
            while (!plugin.test(s, null)) {
                Thread.onSpinWait();
            }
            while (!plugin.test(r, null)) {
                Thread.onSpinWait();
            }
            long t1 = System.nanoTime();
            r = plugin.irecv(ba.recv, 1, bufs, tags, mhs);
            if (i >= warm) {
                half[i - warm] = (t1 - t0) / 2;
            }
        }
        pong.join();
        if (failure[0] != null) {
            throw failure[0];
        }
        plugin.deregMr(ab.send, aSend);
        plugin.deregMr(ba.recv, aRecv);
        plugin.deregMr(ab.recv, bRecv);
        plugin.deregMr(ba.send, bSend);
        for (Pair pair : new Pair[] {ab, ba}) {
            plugin.closeSend(pair.send);
            plugin.closeRecv(pair.recv);
            plugin.closeListen(pair.listen);
        }
        arena.close();
        long[] sorted = half.clone();
        Arrays.sort(sorted);
        double mean = Arrays.stream(half).average().orElse(0);
        return new double[] {sorted[sorted.length / 2] / 1000.0, mean / 1000.0};
    }

    private static String human(long size) {
        return size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB";
    }
}
