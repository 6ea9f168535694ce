package io.jccl.bench;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a call costs through the native shim against the same call made directly in Java, on one
 * transport over a loopback connection driven from one thread:
 * <ul>
 *   <li>{@code test()} of a receive no send matches yet: the transport polls its socket;</li>
 *   <li>{@code iflush()} of host memory: the transport does nothing, so this is the bridge alone;</li>
 *   <li>an 8-byte {@code irecv} + {@code isend} + {@code test} until both are done.</li>
 * </ul>
 * The shim's own cost, as NCCL pays it, is what a C caller measures ({@link #fromDriver}) minus the
 * direct Java figure. Through the native host (Java &rarr; C &rarr; Java) a call crosses twice.
 */
public final class BridgeBenchmark {
    /** Rounds per figure; the fastest is kept (the JIT behind upcalls takes a while to settle). */
    private static final int ROUNDS = 5;

    private BridgeBenchmark() {
    }

    /**
     * @param testNs   ns per {@code test()} of a pending receive
     * @param iflushNs ns per {@code iflush()} of host memory
     * @param pairNs   ns per 8-byte send/receive round
     */
    public record Costs(double testNs, double iflushNs, double pairNs) {
        /** @return the better (lower) of each figure, for best-of-N runs */
        public Costs best(Costs other) {
            return other == null ? this : new Costs(Math.min(testNs, other.testNs), Math.min(iflushNs, other.iflushNs),
                    Math.min(pairNs, other.pairNs));
        }
    }

    /**
     * Measures {@code net} (initialised) from Java: {@code test()} and {@code iflush()} in rounds of
     * {@code iterations} calls, send/receive pairs in rounds of a tenth of that; best round of each.
     */
    public static Costs measure(NetPlugin net, long iterations) throws NetException {
        try (Arena arena = Arena.ofShared()) {
            NetHandle handle = NetHandle.allocate();
            ListenComm listen = net.listen(0, handle);
            SendComm send = null;
            RecvComm recv = null;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (send == null || recv == null) {
                send = send == null ? net.connect(0, handle) : send;
                recv = recv == null ? net.accept(listen) : recv;
                if (System.nanoTime() > deadline) {
                    throw NetException.systemError(net.name() + " did not connect within 30 s");
                }
            }
            MemorySegment src = arena.allocate(4096, 4096);
            MemorySegment dst = arena.allocate(4096, 4096);
            MemoryHandle sm = net.regMr(send, src, PointerType.HOST);
            MemoryHandle rm = net.regMr(recv, dst, PointerType.HOST);
            MemorySegment[] buffers = {dst.asSlice(0, 8)};
            MemorySegment message = src.asSlice(0, 8);
            int[] tags = {7};
            MemoryHandle[] mhs = {rm};
            int[] sizes = new int[64];

            NetRequest pending = post(net, recv, buffers, tags, mhs);
            double testNs = Double.MAX_VALUE;
            double iflushNs = Double.MAX_VALUE;
            for (int round = 0; round < ROUNDS; round++) {
                long t0 = System.nanoTime();
                for (long i = 0; i < iterations; i++) {
                    net.test(pending, null);
                }
                testNs = Math.min(testNs, (System.nanoTime() - t0) / (double) iterations);
            }
            for (int round = 0; round < ROUNDS; round++) {
                long t0 = System.nanoTime();
                for (long i = 0; i < iterations; i++) {
                    if (net.iflush(recv, 1, buffers, mhs) != null) {
                        throw new IllegalStateException(net.name() + " returned a flush request for host memory");
                    }
                }
                iflushNs = Math.min(iflushNs, (System.nanoTime() - t0) / (double) iterations);
            }
            NetRequest s = sendWhile(net, send, message, sm, pending, sizes);
            complete(net, s, pending, sizes);

            double pairNs = Double.MAX_VALUE;
            long pairs = Math.max(1, iterations / 10);
            for (int round = 0; round < ROUNDS; round++) {
                long t0 = System.nanoTime();
                for (long i = 0; i < pairs; i++) {
                    NetRequest r = post(net, recv, buffers, tags, mhs);
                    complete(net, sendWhile(net, send, message, sm, r, sizes), r, sizes);
                }
                pairNs = Math.min(pairNs, (System.nanoTime() - t0) / (double) pairs);
            }

            net.deregMr(send, sm);
            net.deregMr(recv, rm);
            net.closeSend(send);
            net.closeRecv(recv);
            net.closeListen(listen);
            return new Costs(testNs, iflushNs, pairNs);
        }
    }

    private static NetRequest post(NetPlugin net, RecvComm recv, MemorySegment[] buffers, int[] tags,
                                   MemoryHandle[] mhs) throws NetException {
        NetRequest r;
        while ((r = net.irecv(recv, 1, buffers, tags, mhs)) == null) {
            Thread.onSpinWait();
        }
        return r;
    }

    private static NetRequest sendWhile(NetPlugin net, SendComm send, MemorySegment message, MemoryHandle sm,
                                        NetRequest pendingRecv, int[] sizes) throws NetException {
        NetRequest s;
        while ((s = net.isend(send, message, 7, sm)) == null) {
            if (net.test(pendingRecv, sizes)) {
                throw new IllegalStateException("a receive completed before its send");
            }
        }
        return s;
    }

    private static void complete(NetPlugin net, NetRequest send, NetRequest recv, int[] sizes) throws NetException {
        boolean sent = false;
        boolean received = false;
        while (!sent || !received) {
            sent = sent || net.test(send, null);
            received = received || net.test(recv, sizes);
        }
    }

    private static final Pattern DRIVER_LINE =
            Pattern.compile("BENCH test_ns ([0-9.]+) iflush_ns ([0-9.]+) pair_ns ([0-9.]+)");

    /**
     * Runs the shim's C driver ({@code jccl-shim-driver LIBRARY bench N}), a C program that calls
     * the library as NCCL does, in a fresh process (it starts its own JVM through the shim).
     *
     * @param environment added to this process's environment, e.g. {@code JCCL_SHIM_CLASSPATH}
     */
    public static Costs fromDriver(Path driver, Path library, long iterations, Map<String, String> environment)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(driver.toString(), library.toString(), "bench", Long.toString(iterations))
                .redirectErrorStream(true);
        pb.environment().putAll(environment);
        Process p = pb.start();
        if (!p.waitFor(600, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(driver + " did not finish within 600 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Matcher m = DRIVER_LINE.matcher(out);
        if (p.exitValue() != 0 || !m.find()) {
            throw new IOException(driver + " failed (exit " + p.exitValue() + "): " + out);
        }
        return new Costs(Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3)));
    }
}
