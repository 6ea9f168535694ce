package io.jccl.net.socket;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The inline limit of a connection without I/O threads ({@code NCCL_SOCKET_INLINE=auto}): a 64 KiB
 * message behind the engine's 16-byte LL header (65552 bytes, its 4-rank all-reduce of 64 KiB by
 * recursive doubling) goes inline, one write and one read; one byte past {@link Wire#MAX_INLINE}
 * goes after its frame. Both land intact. If this fails, check {@code Wire.MAX_INLINE} against
 * {@code ControlIn.BUFFER_BYTES} (an inline message must fit the receiver's control buffer) and
 * {@code SocketConfig.Settings.inlineBytes}.
 */
class SocketInlineLimitTest {

    @Test
    void aSixtyFourKibMessageWithAHeaderGoesInlineAndOneBytePastTheLimitDoesNot() throws NetException {
        assertTrue(Wire.DATA_HEADER + Wire.MAX_INLINE <= ControlIn.BUFFER_BYTES,
                "an inline message and its frame must fit the receiver's control buffer");
        try (Loopback lo = new Loopback(Map.of(SocketConfig.NCCL_SOCKET_NTHREADS, "0"))) {
            Loopback.Pair p = lo.pair();
            int largest = Wire.MAX_INLINE + 1;
            MemorySegment src = lo.allocate(largest);
            MemorySegment dst = lo.allocate(largest);
            MemoryHandle sm = lo.register(p.send(), src);
            MemoryHandle rm = lo.register(p.recv(), dst);
            SocketSendComm sender = assertInstanceOf(SocketSendComm.class, p.send());
            int[] sizes = {(64 << 10) + 16, Wire.MAX_INLINE, Wire.MAX_INLINE + 1};
            long[] inlineAfter = {1, 2, 2};
            for (int k = 0; k < sizes.length; k++) {
                int size = sizes[k];
                for (int i = 0; i < size; i++) {
                    src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + k));
                }
                int[][] got = lo.awaitAll(lo.recv(p.recv(), dst, 5, rm), lo.send(p.send(), src.asSlice(0, size), 5, sm));
                assertEquals(size, got[0][0], "the receive reports the size sent");
                for (int i = 0; i < size; i++) {
                    if (dst.get(ValueLayout.JAVA_BYTE, i) != (byte) (i * 31 + k)) {
                        throw new AssertionError("byte " + i + " of a " + size + "-byte message differs");
                    }
                }
                assertEquals(inlineAfter[k], inlineSends(sender.counters()),
                        size + " bytes: " + (size <= Wire.MAX_INLINE ? "inline" : "after the frame") + " (" + sender.counters() + ")");
            }
        }
    }

    private static long inlineSends(String counters) {
        Matcher m = Pattern.compile("(\\d+) inline").matcher(counters);
        assertTrue(m.find(), counters);
        return Long.parseLong(m.group(1));
    }
}
