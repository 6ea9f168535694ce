package com.example.uds;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The claim of UdsConnection's data path: isend, irecv and test allocate nothing per message.
 * Measured with the JVM's per-thread allocation counter over many messages after a warm-up, so
 * that a few bytes of JIT or class-loading noise cannot hide a per-message allocation.
 */
class DataPathAllocationTest {
    private static final int MESSAGES = 20_000;

    @Test
    void isendIrecvAndTestAllocateNothingPerMessage() throws Exception {
        ExampleUdsPlugin plugin = new ExampleUdsPlugin();
        plugin.init(NetLogger.noop());
        NetHandle handle = NetHandle.allocate();
        ListenComm listener = plugin.listen(0, handle);
        SendComm send = plugin.connect(0, handle);
        RecvComm recv = null;
        for (int i = 0; i < 1000 && recv == null; i++) {
            recv = plugin.accept(listener);
            Thread.sleep(1);
        }
        assertNotNull(recv, "no connection within a second");
        plugin.closeListen(listener);

        MemorySegment out = Arena.ofAuto().allocate(64 << 10);
        MemorySegment in = Arena.ofAuto().allocate(64 << 10);
        MemoryHandle smh = plugin.regMr(send, out, PointerType.HOST);
        MemoryHandle rmh = plugin.regMr(recv, in, PointerType.HOST);
        MemorySegment[] slices = new MemorySegment[64]; // made here: the measured loop makes no segments itself
        for (int i = 0; i < slices.length; i++) {
            slices[i] = out.asSlice(0, 1 + (i * 67L) % 4096);
        }
        MemorySegment[] data = {in};
        int[] tags = {0};
        MemoryHandle[] mhs = {rmh};
        int[] sizes = new int[1];

        exchange(plugin, send, recv, slices, smh, data, tags, mhs, sizes, MESSAGES); // warm-up: JIT, lazy init
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = mx.getCurrentThreadAllocatedBytes();
        exchange(plugin, send, recv, slices, smh, data, tags, mhs, sizes, MESSAGES);
        long perMessage = (mx.getCurrentThreadAllocatedBytes() - before) / MESSAGES;
        assertTrue(perMessage < 8, perMessage + " bytes allocated per message (send, receive, tests)");

        plugin.closeSend(send);
        plugin.closeRecv(recv);
        plugin.close();
    }

    /** Messages of 1 to 4096 bytes (the slices), one receive and one send in flight at a time. */
    private static void exchange(ExampleUdsPlugin plugin, SendComm send, RecvComm recv, MemorySegment[] slices,
                                 MemoryHandle smh, MemorySegment[] data, int[] tags, MemoryHandle[] mhs,
                                 int[] sizes, int messages) throws Exception {
        for (int m = 0; m < messages; m++) {
            MemorySegment message = slices[m % slices.length];
            NetRequest r = plugin.irecv(recv, 1, data, tags, mhs);
            NetRequest s = plugin.isend(send, message, 0, smh);
            assertNotNull(r);
            assertNotNull(s);
            boolean sent = false;
            boolean received = false;
            while (!(sent && received)) {
                sent = sent || plugin.test(s, null);
                received = received || plugin.test(r, sizes);
            }
            assertEquals(message.byteSize(), sizes[0]);
        }
    }
}
