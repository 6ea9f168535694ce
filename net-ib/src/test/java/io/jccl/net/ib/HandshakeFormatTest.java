package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetResult;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The handle and the side-channel messages: round trips, and garbage refused with a reason. */
class HandshakeFormatTest {
    private static final byte[] SECRET = "0123456789abcdef".getBytes();

    @Test
    void handleRoundTripsAndKeepsResumeStateApart() throws Exception {
        NetHandle h = NetHandle.allocate();
        InetSocketAddress a = new InetSocketAddress(InetAddress.getByName("169.254.77.1"), 40123);
        IbHandle.write(h, a, SECRET);
        NetHandle copy = h.copy();
        IbHandle.setResumeId(h, 42);
        IbHandle.Target t = IbHandle.read(h);
        assertEquals(a, t.address());
        assertArrayEquals(SECRET, t.secret());
        assertEquals(42, IbHandle.resumeId(h));
        assertEquals(0, IbHandle.resumeId(copy), "a copy taken after listen starts a fresh connection");

        NetHandle v6 = NetHandle.allocate();
        InetSocketAddress b = new InetSocketAddress(InetAddress.getByName("fd00::7"), 9);
        IbHandle.write(v6, b, SECRET);
        assertEquals(b, IbHandle.read(v6).address());
    }

    @Test
    void foreignHandlesAreInvalidArguments() {
        NetException e = assertThrows(NetException.class, () -> IbHandle.read(NetHandle.fromBytes(new byte[] {1, 2})));
        assertEquals(NetResult.INVALID_ARGUMENT, e.result());
        assertTrue(e.getMessage().contains("not a JcclIB handle"), e.getMessage());
    }

    private static ConnectionInfo info(int type) {
        byte[] gid = new byte[16];
        gid[15] = 7;
        return new ConnectionInfo(type, SECRET, true, new PeerAddress(Ibv.LINK_LAYER_ETHERNET, 5, 0, gid), 0x7f0012345000L,
                0x1234, new int[] {17, 18, 19});
    }

    @Test
    void connectionInfoRoundTrips() {
        ByteBuffer b = info(ConnectionInfo.HELLO).encode();
        assertEquals(ConnectionInfo.HEADER + 12, b.remaining());
        assertEquals(3, ConnectionInfo.checkHeader(b, ConnectionInfo.HELLO, SECRET));
        ConnectionInfo d = ConnectionInfo.decode(b);
        assertEquals(ConnectionInfo.HELLO, d.type());
        assertTrue(d.splitData());
        assertArrayEquals(new int[] {17, 18, 19}, d.qpns());
        assertEquals(0x7f0012345000L, d.bufferAddress());
        assertEquals(0x1234, d.bufferRkey());
        assertEquals(5, d.peer().mtu());
        assertEquals(Ibv.LINK_LAYER_ETHERNET, d.peer().linkLayer());
        assertEquals(7, d.peer().gid()[15]);
        ConnectionInfo.checkReady(ConnectionInfo.ready());
    }

    @Test
    void garbageAndForgeriesAreRefusedWithAReason() {
        ByteBuffer hello = info(ConnectionInfo.HELLO).encode();
        byte[] junk = new byte[ConnectionInfo.HEADER];
        Arrays.fill(junk, (byte) 'x');
        assertMessage("bad magic", () -> ConnectionInfo.checkHeader(ByteBuffer.wrap(junk), ConnectionInfo.HELLO, SECRET));
        assertMessage("wrong secret", () -> ConnectionInfo.checkHeader(hello, ConnectionInfo.HELLO,
                "fedcba9876543210".getBytes()));
        assertMessage("message type", () -> ConnectionInfo.checkHeader(hello, ConnectionInfo.REPLY, SECRET));
        ByteBuffer tooMany = info(ConnectionInfo.HELLO).encode();
        tooMany.putShort(24, (short) 500);
        assertMessage("queue pairs", () -> ConnectionInfo.checkHeader(tooMany, ConnectionInfo.HELLO, SECRET));
        ByteBuffer version = info(ConnectionInfo.HELLO).encode();
        version.putShort(4, (short) 9);
        assertMessage("protocol version", () -> ConnectionInfo.checkHeader(version, ConnectionInfo.HELLO, SECRET));
        assertMessage("READY", () -> ConnectionInfo.checkReady(ByteBuffer.wrap(new byte[8])));
    }

    private static void assertMessage(String expected, org.junit.jupiter.api.function.Executable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
