package io.jccl.net.socket;

import io.jccl.spi.LogLevel;
import io.jccl.spi.NetRequest;

import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * Run by {@link MinimalRuntimeTest} in a Java runtime that has {@code java.base} only: connects a
 * JcclSocket pair, moves one message each way of the inline and of the streamed kind, prints the
 * plugin's log lines and OK.
 */
public final class MinimalRuntimeMain {
    private MinimalRuntimeMain() {
    }

    public static void main(String[] args) throws Exception {
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "1"),
                (LogLevel level, long subsystems, String message) -> System.out.println(level + " " + message))) {
            Loopback.Pair p = lo.pair();
            for (int bytes : new int[] {100, 4 << 20}) {
                MemorySegment src = lo.allocate(bytes);
                MemorySegment dst = lo.allocate(bytes);
                Loopback.fillPattern(src, bytes);
                NetRequest r = lo.recv(p.recv(), dst, 0, lo.register(p.recv(), dst));
                lo.awaitAll(lo.send(p.send(), src, 0, lo.register(p.send(), src)), r);
                if (Loopback.checksum(src, bytes) != Loopback.checksum(dst, bytes)) {
                    throw new AssertionError(bytes + "-byte message arrived corrupted");
                }
            }
        }
        // After the close: closing the pair (its INFO lines) must work without jdk.net too.
        System.out.println("OK");
    }
}
