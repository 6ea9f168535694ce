package io.jccl.core.transport;

import io.jccl.core.JcclException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shared-memory connection pair: its ring of slots, and the checks made when it is mapped. */
class ShmConnectionTest {
    private static final int SLOT = 256;

    @Test
    void publishedSlotsReachTheReceiverInOrderAndAFullRingWaitsForConsume() {
        try (Arena arena = Arena.ofShared()) {
            ShmBuffer.Created b = ShmBuffer.create(arena, SLOT, "test");
            MemorySegment senderView = ShmBuffer.open(arena, b.path(), b.cookie(), SLOT, 1, "test");
            ShmRecvConnection recv = new ShmRecvConnection(0, "recv", b.mapped(), SLOT, b.path());
            ShmSendConnection send = new ShmSendConnection(1, "send", senderView, SLOT);
            assertFalse(recv.hasData(), "nothing published yet");
            for (int i = 0; i < Connection.STEPS; i++) {
                assertTrue(send.hasRoom(), "slot " + i + " is free");
                send.fillSlot().set(ValueLayout.JAVA_INT, 0, 1000 + i);
                send.publish(4 + i);
            }
            assertFalse(send.hasRoom(), "8 slots in flight: the sender must wait for the receiver");
            for (int i = 0; i < Connection.STEPS; i++) {
                assertTrue(recv.hasData());
                assertEquals(1000 + i, recv.dataSlot().get(ValueLayout.JAVA_INT, 0));
                assertEquals(4 + i, recv.dataSize());
                recv.consume();
                assertTrue(send.hasRoom(), "a consumed slot is free again");
            }
            assertFalse(recv.hasData());
        }
    }

    @Test
    void theSenderDeletesTheFileOnceMappedSoNothingIsLeftBehind() {
        try (Arena arena = Arena.ofShared()) {
            ShmBuffer.Created b = ShmBuffer.create(arena, SLOT, "test");
            assertTrue(Files.exists(b.path()));
            ShmBuffer.open(arena, b.path(), b.cookie(), SLOT, 1, "test");
            assertFalse(Files.exists(b.path()), b.path() + " should be gone once the sender mapped it");
        }
    }

    @Test
    void aBufferWithTheWrongCookieIsRefusedWithAClearError() {
        try (Arena arena = Arena.ofShared()) {
            ShmBuffer.Created b = ShmBuffer.create(arena, SLOT, "test");
            JcclException e = assertThrows(JcclException.class,
                    () -> ShmBuffer.open(arena, b.path(), b.cookie() + 1, SLOT, 3, "channel 0 send to rank 3"));
            assertTrue(e.getMessage().contains("not the buffer rank 3 made"), e.getMessage());
            assertEquals(3, e.failedRank());
        }
    }

    @Test
    void aMissingOrWronglySizedFileIsRefusedNamingThePeer() throws IOException {
        try (Arena arena = Arena.ofShared()) {
            Path missing = ShmBuffer.directory().resolve("jccl-shm-test-missing-" + System.nanoTime());
            JcclException e = assertThrows(JcclException.class,
                    () -> ShmBuffer.open(arena, missing, 1, SLOT, 2, "channel 0 send to rank 2"));
            assertTrue(e.getMessage().contains("cannot map rank 2's shared memory"), e.getMessage());
            assertTrue(e.getMessage().contains("NCCL_SHM_DISABLE"), e.getMessage());
            Path small = Files.createTempFile(ShmBuffer.directory(), "jccl-shm-test-", "");
            Files.write(small, new byte[100]);
            JcclException e2 = assertThrows(JcclException.class,
                    () -> ShmBuffer.open(arena, small, 1, SLOT, 2, "channel 0 send to rank 2"));
            assertTrue(e2.getMessage().contains("holds 100 bytes"), e2.getMessage());
            assertFalse(Files.exists(small));
        }
    }
}
