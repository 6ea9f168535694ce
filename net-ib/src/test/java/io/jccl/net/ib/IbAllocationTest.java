package io.jccl.net.ib;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static io.jccl.net.ib.IbTestSupport.pattern;
import static io.jccl.net.ib.IbTestSupport.reg;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code isend}, {@code irecv}, {@code iflush} and {@code test} allocate nothing per message: the
 * bytes this thread allocates over thousands of messages, after a warm-up, stay at zero. In the VM
 * the JVM runs C1 only, without escape analysis, so nothing is hidden by the JIT.
 */
@RequiresRdma
class IbAllocationTest {

    @Test
    void theDataPathAllocatesNothingPerMessage() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported());
        IbNetPlugin plugin = IbTestSupport.plugin(IbConfig.JCCL_IB_FLUSH_HOST_MEMORY, "1");
        try (Arena arena = Arena.ofShared(); IbTestSupport.Pair p = IbTestSupport.connect(plugin, plugin)) {
            MemorySegment src = pattern(arena, 4096, 1);
            MemorySegment dst = arena.allocate(4096, 64);
            MemoryHandle smh = reg(plugin, p.send(), src);
            MemoryHandle rmh = reg(plugin, p.recv(), dst);
            MemorySegment[] bufs = {dst};
            int[] tags = {0};
            MemoryHandle[] mhs = {rmh};
            int[] sizes = new int[8];
            long tid = Thread.currentThread().threadId();
            exchange(plugin, p, src, smh, bufs, tags, mhs, sizes, 3000); // warm-up: class init, JIT, pools
            long before = threads.getThreadAllocatedBytes(tid);
            int messages = 3000;
            exchange(plugin, p, src, smh, bufs, tags, mhs, sizes, messages);
            long allocated = threads.getThreadAllocatedBytes(tid) - before;
            assertEquals(4096, sizes[0]);
            // a few bytes of slack for the measurement itself; one allocation per message would be >= 16 B each
            assertTrue(allocated < 1024, allocated + " bytes allocated over " + messages + " messages ("
                    + (double) allocated / messages + " per message)");
        } finally {
            plugin.close();
        }
    }

    /** irecv, isend, test both, iflush and test it: the proxy's cycle, one message at a time. */
    private static void exchange(IbNetPlugin plugin, IbTestSupport.Pair p, MemorySegment src, MemoryHandle smh,
            MemorySegment[] bufs, int[] tags, MemoryHandle[] mhs, int[] sizes, int count) throws NetException {
        for (int i = 0; i < count; i++) {
            NetRequest r;
            while ((r = plugin.irecv(p.recv(), 1, bufs, tags, mhs)) == null) {
                Thread.onSpinWait();
            }
            NetRequest s;
            while ((s = plugin.isend(p.send(), src, 0, smh)) == null) {
                Thread.onSpinWait();
            }
            while (!plugin.test(s, sizes)) {
                Thread.onSpinWait();
            }
            while (!plugin.test(r, sizes)) {
                Thread.onSpinWait();
            }
            NetRequest f = plugin.iflush(p.recv(), 1, bufs, mhs);
            while (f != null && !plugin.test(f, null)) {
                Thread.onSpinWait();
            }
        }
    }
}
