package io.jccl.shim;

import org.junit.jupiter.api.Test;

import static io.jccl.shim.HandleTable.Kind.RECV;
import static io.jccl.shim.HandleTable.Kind.SEND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HandleTableTest {

    @Test
    void aHandleFindsItsObjectAndNothingElse() {
        HandleTable<String> t = new HandleTable<>();
        long a = t.add("a", SEND);
        long b = t.add("b", RECV);
        assertEquals("a", t.get(a, SEND));
        assertEquals("b", t.get(b, RECV));
        assertNull(t.get(a, RECV), "a send comm's handle is not a receive comm's");
        assertNull(t.get(0x1234L, SEND), "garbage is rejected");
        assertNull(t.get(0L, SEND));
        assertNull(t.get(1L, SEND), "NCCL's 0x1 hint is never a handle");
        assertTrue(a != 0 && a != 1);
    }

    @Test
    void aStaleHandleDoesNotReachTheObjectThatReusedItsSlot() {
        HandleTable<String> t = new HandleTable<>();
        long old = t.add("old", SEND);
        t.remove(old);
        long reused = t.add("new", SEND);
        assertEquals(HandleTable.index(old), HandleTable.index(reused), "the slot is reused");
        assertNotEquals(old, reused, "with a new generation");
        assertNull(t.get(old, SEND));
        assertEquals("new", t.get(reused, SEND));
        t.remove(old);
        assertEquals("new", t.get(reused, SEND), "removing a stale handle removes nothing");
    }

    @Test
    void growsPastItsFirstCapacity() {
        HandleTable<Integer> t = new HandleTable<>();
        long[] handles = new long[1000];
        for (int i = 0; i < handles.length; i++) {
            handles[i] = t.add(i, SEND);
        }
        for (int i = 0; i < handles.length; i++) {
            assertEquals(i, t.get(handles[i], SEND));
        }
        assertEquals(1000, t.size());
    }

    @Test
    void requestHandlesNameTheirCommAndSlot() {
        HandleTable<BridgedComm> comms = new HandleTable<>();
        long h = comms.add(handle -> new BridgedComm("comm", SEND, handle), SEND);
        BridgedComm c = comms.get(h, SEND);
        io.jccl.spi.NetRequest q = new io.jccl.spi.NetRequest() { };
        long r = c.track(q, 3);
        assertEquals(c, BridgedComm.ofRequest(comms, r));
        assertEquals(q, c.request(r));
        assertEquals(3, c.buffers(r));
        c.release(r);
        assertNull(c.request(r), "a completed request is gone");
        comms.remove(h);
        assertNull(BridgedComm.ofRequest(comms, r), "a closed comm's requests are gone");
    }
}
