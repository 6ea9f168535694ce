package io.jccl.core.transport;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Receives straight into user buffers ({@link NetRecvConnection#receiveInto}) over the real
 * JcclSocket: a message so placed lands in the user's range and not in a slot, others keep using
 * slots, in order, however many are announced ahead.
 */
class NetRecvConnectionDirectTest extends OverJcclSocket {
    private static NetConnectionPair pair(Arena arena) throws NetException {
        return NetConnectionPair.connect(socket, 0, 1, arena.allocate(Connection.STEPS * SLOT, 4096),
                arena.allocate(Connection.STEPS * SLOT, 4096), SLOT);
    }

    /** Sends {@code bytes} bytes of {@code value} through a send slot. */
    private static void send(NetConnectionPair pair, int bytes, byte value) throws NetException {
        while (!pair.send().hasRoom()) {
            pair.send().progress();
            pair.recv().progress();
        }
        pair.send().fillSlot().asSlice(0, bytes).fill(value);
        pair.send().publish(bytes);
    }

    /** Progresses both ends until a received message waits for the kernel; fails after 10 s. */
    private static void awaitData(NetConnectionPair pair) throws NetException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!pair.recv().hasData()) {
            pair.send().progress();
            pair.recv().progress();
            assertTrue(System.nanoTime() - deadline < 0, "no message within 10 s");
        }
    }

    private static boolean all(MemorySegment range, byte value) {
        for (long i = 0; i < range.byteSize(); i++) {
            if (range.get(ValueLayout.JAVA_BYTE, i) != value) {
                return false;
            }
        }
        return true;
    }

    @Test
    void aDirectReceiveLandsInTheUserBufferAndNotInTheSlot() throws Exception {
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = pair(arena)) {
            MemorySegment user = arena.allocate(2 * SLOT, 64);
            assertNull(pair.recv().directHandle(user), "not allowed until allowDirect");
            pair.recv().allowDirect();
            MemoryHandle h = pair.recv().directHandle(user);
            assertNotNull(h);
            pair.recv().receiveInto(pair.recv().expected(), user, 100, 500, h);
            pair.recv().expect(1);
            send(pair, 500, (byte) 7);
            awaitData(pair);
            assertTrue(pair.recv().receivedDirectly());
            assertEquals(500, pair.recv().dataSize());
            assertTrue(all(user.asSlice(100, 500), (byte) 7), "the bytes are in the user's range");
            assertTrue(all(user.asSlice(0, 100), (byte) 0) && all(user.asSlice(600, 2 * SLOT - 600), (byte) 0),
                    "and nowhere else in the buffer");
            assertTrue(all(pair.recv().dataSlot().asSlice(0, 500), (byte) 0), "the slot was not written");
            pair.recv().consume();
            assertEquals(1, pair.recv().directReceives());
        }
    }

    @Test
    void directAndSlotReceivesInterleaveInOrderHoweverManyAreAnnouncedAhead() throws Exception {
        int messages = 5 * Connection.STEPS; // more targets than the queue's first 16
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = pair(arena)) {
            MemorySegment user = arena.allocate((long) messages * 64, 64);
            pair.recv().allowDirect();
            MemoryHandle h = pair.recv().directHandle(user);
            long first = pair.recv().expected();
            for (int k = 0; k < messages; k += 2) {
                pair.recv().receiveInto(first + k, user, k * 64L, 64, h);
            }
            pair.recv().expect(messages);
            for (int k = 0; k < messages; k++) {
                send(pair, 64, (byte) (k + 1));
                awaitData(pair);
                boolean toUser = k % 2 == 0;
                assertEquals(toUser, pair.recv().receivedDirectly(), "message " + k);
                MemorySegment where = toUser ? user.asSlice(k * 64L, 64) : pair.recv().dataSlot().asSlice(0, 64);
                assertTrue(all(where, (byte) (k + 1)), "message " + k + " in " + (toUser ? "the user's range" : "its slot"));
                if (!toUser) {
                    assertTrue(all(user.asSlice(k * 64L, 64), (byte) 0), "message " + k + " not in the user's buffer");
                }
                pair.recv().consume();
            }
            assertEquals(messages / 2, pair.recv().directReceives());
            assertFalse(pair.recv().hasData());
        }
    }
}
