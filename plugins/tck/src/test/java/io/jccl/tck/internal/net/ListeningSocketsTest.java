package io.jccl.tck.internal.net;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

class ListeningSocketsTest {

    @Test
    void aListeningSocketOfThisProcessIsFoundAndGoneAfterClose() throws Exception {
        assumeTrue(ListeningSockets.supported(), "needs Linux /proc");
        InetSocketAddress bound;
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            bound = (InetSocketAddress) server.getLocalAddress();
            assertTrue(ListeningSockets.ofThisProcess().contains(bound), ListeningSockets.ofThisProcess() + " lacks " + bound);
        }
        assertFalse(ListeningSockets.ofThisProcess().contains(bound));
    }
}
