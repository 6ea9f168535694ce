package io.jccl.core.transport;

import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.PointerType;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sends straight from user buffers ({@link NetSendConnection#publishDirect}) over the real
 * JcclSocket: the bytes arrive without passing through the slot, registrations are made once,
 * kept while a send may read them, and released.
 */
class NetSendConnectionDirectTest extends OverJcclSocket {
    /** JcclSocket that counts registrations, and refuses them when asked to. */
    private static final class CountingRegistrations extends ForwardingNetPlugin {
        int registered;
        int deregistered;
        boolean refuse;

        CountingRegistrations(NetPlugin delegate) {
            super(delegate);
        }

        @Override
        public MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException {
            if (refuse) {
                throw NetException.internalError("test: registration refused");
            }
            registered++;
            return delegate.regMr(comm, data, type);
        }

        @Override
        public void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException {
            deregistered++;
            delegate.deregMr(comm, mhandle);
        }
    }

    private static NetConnectionPair pair(NetPlugin net, Arena arena) throws NetException {
        return NetConnectionPair.connect(net, 0, 1, arena.allocate(Connection.STEPS * SLOT, 4096),
                arena.allocate(Connection.STEPS * SLOT, 4096), SLOT);
    }

    /** Progresses both ends until the receiver holds {@code want} messages; fails after 10 s. */
    private static void deliver(NetConnectionPair pair, long want) throws NetException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (pair.recv().received() < want || !pair.send().drained()) {
            pair.send().progress();
            pair.recv().progress();
            assertTrue(System.nanoTime() - deadline < 0, "message " + want + " did not arrive within 10 s");
        }
    }

    @Test
    void aDirectSendCarriesTheUserBytesAndLeavesTheSlotUntouched() throws Exception {
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = pair(socket, arena)) {
            MemorySegment user = arena.allocate(3 * SLOT, 64);
            for (int i = 0; i < user.byteSize(); i++) {
                user.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 5));
            }
            pair.send().allowDirect();
            MemoryHandle h = pair.send().directHandle(user);
            assertNotNull(h, "JcclSocket registers host memory");
            pair.recv().expect(1);
            MemorySegment slot = pair.send().fillSlot();
            long mark = pair.send().publishDirect(user, SLOT + 3, 1000, h);
            assertEquals(1, mark);
            deliver(pair, 1);
            assertTrue(pair.send().completed() >= mark, "the direct send completed");
            assertEquals(1000, pair.recv().dataSize());
            assertEquals(-1, pair.recv().dataSlot().asSlice(0, 1000).mismatch(user.asSlice(SLOT + 3, 1000)),
                    "the receiver got the user's bytes");
            assertEquals(-1, slot.asSlice(0, 1000).mismatch(MemorySegment.ofArray(new byte[1000])),
                    "nothing was copied into the send slot");
            assertEquals(1, pair.send().directSends());
            pair.recv().consume();
        }
    }

    @Test
    void slotAndDirectSendsInterleaveInOrder() throws Exception {
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = pair(socket, arena)) {
            MemorySegment user = arena.allocate(SLOT, 64).fill((byte) 9);
            pair.send().allowDirect();
            MemoryHandle h = pair.send().directHandle(user);
            pair.recv().expect(2 * Connection.STEPS);
            for (int k = 0; k < 2 * Connection.STEPS; k++) {
                while (!pair.send().hasRoom()) {
                    pair.send().progress();
                    pair.recv().progress();
                }
                if (k % 2 == 0) {
                    pair.send().publishDirect(user, 0, 100 + k, h);
                } else {
                    pair.send(100 + k);
                }
                deliver(pair, 1);
                assertEquals(100 + k, pair.recv().dataSize(), "message " + k);
                assertEquals(k % 2 == 0 ? 9 : 7, pair.recv().dataSlot().get(ValueLayout.JAVA_BYTE, 0), "message " + k);
                pair.recv().consume();
            }
        }
    }

    @Test
    void registrationsAreMadeOnceKeptWhileInUseAndReleased() throws Exception {
        CountingRegistrations net = new CountingRegistrations(socket);
        try (Arena arena = Arena.ofShared()) {
            NetConnectionPair pair = pair(net, arena);
            pair.send().allowDirect();
            MemorySegment a = arena.allocate(SLOT, 64);
            MemoryHandle h = pair.send().directHandle(a);
            assertSame(h, pair.send().directHandle(a), "the same buffer again");
            assertSame(h, pair.send().directHandle(a.asSlice(64, 128)), "a range inside a registered buffer");
            assertEquals(3, net.registered, "the two slot buffers and this one");

            // Every registration holds a send in flight: none can be dropped, so the next buffer is copied.
            pair.recv().expect(NetSendConnection.REGISTRATIONS);
            MemorySegment[] busy = new MemorySegment[NetSendConnection.REGISTRATIONS];
            for (int i = 0; i < busy.length; i++) {
                busy[i] = i == 0 ? a : arena.allocate(SLOT, 64);
                pair.send().publishDirect(busy[i], 0, 16, pair.send().directHandle(busy[i]));
            }
            MemorySegment extra = arena.allocate(SLOT, 64);
            assertNull(pair.send().directHandle(extra), "no registration is free while sends may read them all");
            deliver(pair, NetSendConnection.REGISTRATIONS);
            for (int i = 0; i < busy.length; i++) {
                pair.recv().consume();
            }
            assertNotNull(pair.send().directHandle(extra), "once the sends completed, the oldest gives way");
            assertEquals(1, net.deregistered, "the registration given up");

            // A buffer whose memory was freed gives its registration up first, before live ones.
            try (Arena gone = Arena.ofShared()) {
                assertNotNull(pair.send().directHandle(gone.allocate(SLOT, 64)));
            }
            int dropped = net.deregistered;
            assertNotNull(pair.send().directHandle(arena.allocate(SLOT, 64)));
            assertEquals(dropped + 1, net.deregistered, "one registration released for the new buffer");
            int made = net.registered;
            for (MemorySegment live : new MemorySegment[] {extra, busy[2], busy[3]}) {
                pair.send().directHandle(live);
            }
            assertEquals(made, net.registered, "the live buffers kept theirs: the freed buffer's was the one released");

            pair.close();
            assertEquals(net.registered, net.deregistered, "close releases every registration, slots' and users'");
        }
    }

    @Test
    void withoutPermissionOrWhenRefusedTheConnectionCopies() throws Exception {
        CountingRegistrations net = new CountingRegistrations(socket);
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = pair(net, arena)) {
            MemorySegment user = arena.allocate(SLOT, 64);
            assertNull(pair.send().directHandle(user), "not allowed: device buffers, or JCCL_NET_DIRECT=0");
            pair.send().allowDirect();
            net.refuse = true;
            assertNull(pair.send().directHandle(user), "refused by the transport");
            net.refuse = false;
            assertNull(pair.send().directHandle(user), "after a refusal the connection stops asking");
        }
    }

    @Test
    void heapSegmentsAreCopiedNotRegistered() throws Exception {
        CountingRegistrations net = new CountingRegistrations(socket);
        try (Arena arena = Arena.ofShared(); NetConnectionPair pair = pair(net, arena)) {
            pair.send().allowDirect();
            int before = net.registered;
            assertNull(pair.send().directHandle(MemorySegment.ofArray(new byte[SLOT])),
                    "a heap segment's address is an offset into its array");
            assertEquals(before, net.registered);
        }
    }
}
