package com.example.uds;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * What the kit's rule fault.3 checks for TCP listeners, for this transport's socket files: stray
 * connections (silent, garbage, gone at once, a wrong cookie) never become comms and do not keep a
 * genuine peer out. The kit cannot aim at a Unix domain socket without knowing the handle format,
 * so the vendor tests it here.
 */
class StrayConnectionTest {
    private final ExampleUdsPlugin plugin = new ExampleUdsPlugin();
    private final List<SocketChannel> strays = new ArrayList<>();

    @BeforeEach
    void init() throws Exception {
        plugin.init(NetLogger.noop());
    }

    @AfterEach
    void close() throws IOException {
        for (SocketChannel c : strays) {
            c.close();
        }
        plugin.close();
    }

    private SocketChannel stray(Path path, byte[] bytes) throws IOException {
        SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(path));
        ByteBuffer b = ByteBuffer.wrap(bytes);
        while (b.hasRemaining()) {
            c.write(b);
        }
        return c;
    }

    @Test
    void strayConnectionsAreDroppedAndAGenuinePeerGetsThrough() throws Exception {
        NetHandle handle = NetHandle.allocate();
        ListenComm listener = plugin.listen(0, handle);
        Path path = UdsHandle.read(handle).path();
        assertEquals(PosixFilePermissions.fromString("rw-------"), Files.getPosixFilePermissions(path),
                "the socket file must be the owner's only");

        byte[] garbage = new byte[4096];
        new Random(42).nextBytes(garbage);
        ByteBuffer wrongCookie = ByteBuffer.allocate(24).putLong(UdsHandle.MAGIC); // magic right, cookie zeros
        strays.add(stray(path, new byte[0]));                                    // silent, kept open
        strays.add(stray(path, Arrays.copyOf(garbage, 128)));         // garbage, kept open
        stray(path, garbage).close();                                            // garbage, then gone
        stray(path, new byte[0]).close();                                        // connects and leaves
        strays.add(stray(path, wrongCookie.array()));                            // a wrong secret

        long until = System.nanoTime() + 300_000_000L;
        while (System.nanoTime() < until) {
            assertNull(plugin.accept(listener), "accept returned a comm for a stray connection");
            Thread.sleep(5);
        }

        SendComm send = plugin.connect(0, handle);
        RecvComm recv = null;
        for (int i = 0; i < 1000 && recv == null; i++) {
            recv = plugin.accept(listener);
            Thread.sleep(1);
        }
        assertNotNull(recv, "with strays open, the genuine connection was not accepted within a second");
        plugin.closeListen(listener);
        assertFalse(Files.exists(path), "closeListen must remove the socket file");

        // The genuine connection carries data.
        MemorySegment out = Arena.ofAuto().allocate(100_000);
        MemorySegment in = Arena.ofAuto().allocate(100_000);
        for (int i = 0; i < out.byteSize(); i++) {
            out.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
        }
        MemoryHandle smh = plugin.regMr(send, out, PointerType.HOST);
        MemoryHandle rmh = plugin.regMr(recv, in, PointerType.HOST);
        NetRequest r = plugin.irecv(recv, 1, new MemorySegment[] {in}, new int[] {0}, new MemoryHandle[] {rmh});
        NetRequest s = plugin.isend(send, out, 0, smh);
        int[] got = new int[1];
        boolean sent = false;
        boolean received = false;
        for (int i = 0; i < 1_000_000 && !(sent && received); i++) {
            sent = sent || plugin.test(s, null);
            received = received || plugin.test(r, got);
        }
        assertEquals(100_000, got[0]);
        assertEquals(-1, out.mismatch(in), "the received bytes differ from the sent ones");
        plugin.deregMr(send, smh);
        plugin.deregMr(recv, rmh);
        plugin.closeSend(send);
        plugin.closeRecv(recv);
    }
}
