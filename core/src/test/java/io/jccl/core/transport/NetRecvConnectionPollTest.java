package io.jccl.core.transport;

import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A receiving connection over the network hands over one received message per progress call and
 * then stops testing: over a socket the test of the next receive is a read syscall, mostly empty
 * when the caller (the small-message path, or the proxy) asks again only once it wants that message.
 */
class NetRecvConnectionPollTest extends OverJcclSocket {
    /** JcclSocket that counts the tests of requests and whether the last one completed its request. */
    private static final class CountingTests extends ForwardingNetPlugin {
        int tests;
        boolean lastCompleted;

        CountingTests(NetPlugin delegate) {
            super(delegate);
        }

        @Override
        public boolean test(NetRequest request, int[] sizes) throws NetException {
            tests++;
            lastCompleted = delegate.test(request, sizes);
            return lastCompleted;
        }
    }

    @Test
    void aProgressCallHandsOverOneMessageAndDoesNotTestTheNext() throws Exception {
        CountingTests net = new CountingTests(socket);
        try (Arena arena = Arena.ofShared();
             NetConnectionPair pair = NetConnectionPair.connect(net, 0, 1, arena.allocate(Connection.STEPS * SLOT, 4096),
                     arena.allocate(Connection.STEPS * SLOT, 4096), SLOT)) {
            pair.recv().expect(3);
            pair.send(64);
            pair.send(128);
            pair.send(256);
            long deadline = System.nanoTime() + 10_000_000_000L;
            for (long want = 1; want <= 3; want++) {
                while (pair.recv().received() < want) {
                    pair.send().progress();
                    net.tests = 0;
                    pair.recv().progress();
                    assertTrue(System.nanoTime() - deadline < 0, "message " + want + " did not arrive within 10 s");
                }
                assertEquals(want, pair.recv().received(), "one message handed over per progress call");
                assertTrue(net.lastCompleted, "the call ended with the test that completed message " + want
                        + ", not with a test of the next receive (" + net.tests + " tests in that call)");
                assertEquals(64 << (want - 1), pair.recv().dataSize());
                pair.recv().consume();
            }
        }
    }
}
