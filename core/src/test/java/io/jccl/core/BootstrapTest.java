package io.jccl.core;

import io.jccl.spi.DataType;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Socket;
import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The unique id, the secret every connection proves, and a root that garbage cannot wedge. */
class BootstrapTest {
    static final CommConfig CONFIG = CommConfig.builder().timeout(Duration.ofSeconds(20)).build();

    @Test
    void aUniqueIdTravelsAsBytesOrHexAndCarriesAFreshSecret() {
        UniqueId a = UniqueId.create(Duration.ofSeconds(1));
        UniqueId b = UniqueId.create(Duration.ofSeconds(1));
        assertEquals(UniqueId.SIZE, a.toBytes().length);
        assertEquals(a, UniqueId.fromBytes(a.toBytes()));
        assertEquals(a, UniqueId.parse(a.toString()));
        assertNotEquals(a, b);
        assertTrue(!java.util.Arrays.equals(a.secret(), b.secret()), "every id has its own secret");
        assertThrows(JcclException.class, () -> UniqueId.fromBytes(new byte[UniqueId.SIZE]), "zeros are not an id");
        assertThrows(JcclException.class, () -> UniqueId.fromBytes(new byte[5]));
        assertThrows(JcclException.class, () -> UniqueId.parse("not hex"));
    }

    @Test
    void aRankWithTheWrongSecretIsRefusedAndTheOthersStillFormTheCommunicator() throws Exception {
        UniqueId good = UniqueId.create(Duration.ofSeconds(20));
        UniqueId forged = UniqueId.at(good.rootAddress(), "guess");
        JcclException refused = assertThrows(JcclException.class, () -> Communicator.init(2, forged, 1, CONFIG));
        assertTrue(refused.getMessage().contains("secret"), refused.getMessage());
        try (LocalRanks ranks = new LocalRanks(2, 2, good, CONFIG)) {
            assertEquals(List.of(3.0f, 3.0f), sumOfRanksPlusOne(ranks));
        }
    }

    @Test
    void garbageAndSilentConnectionsToTheRootDoNotWedgeIt() throws Exception {
        UniqueId id = UniqueId.create(Duration.ofSeconds(20));
        try (Socket silent = new Socket(id.rootAddress().getAddress(), id.rootAddress().getPort());
             Socket garbage = new Socket(id.rootAddress().getAddress(), id.rootAddress().getPort())) {
            OutputStream out = garbage.getOutputStream();
            try {
                out.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
                out.write(new byte[4096]);
                out.flush();
            } catch (java.io.IOException droppedAlready) {
                // The root may close a garbage connection before all of it is written: that is the point.
            }
            try (LocalRanks ranks = new LocalRanks(2, 2, id, CONFIG)) {
                assertEquals(List.of(3.0f, 3.0f), sumOfRanksPlusOne(ranks));
                assertTrue(silent.isConnected());
            }
        }
    }

    @Test
    void ranksThatDisagreeOnTheSizeAreRefusedWithBothSizesNamed() throws Exception {
        UniqueId id = UniqueId.create(Duration.ofSeconds(3));
        CommConfig quick = CommConfig.builder().timeout(Duration.ofSeconds(3)).build();
        java.util.concurrent.CompletableFuture<JcclException> two = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> assertThrows(JcclException.class, () -> Communicator.init(2, id, 0, quick)));
        Thread.sleep(200);
        JcclException three = assertThrows(JcclException.class, () -> Communicator.init(3, id, 1, quick));
        assertEquals(NetResult.INVALID_USAGE, three.result(), three.toString());
        assertTrue(three.getMessage().contains("3 ranks") && three.getMessage().contains("said 2"), three.getMessage());
        assertEquals(NetResult.TIMEOUT, two.get().result(), "rank 0 waits in vain for a second rank of 2");
    }

    static List<Float> sumOfRanksPlusOne(LocalRanks ranks) {
        return ranks.run(rank -> {
            MemorySegment m = Arena.ofAuto().allocate(4);
            m.set(ValueLayout.JAVA_FLOAT, 0, rank + 1);
            ranks.comms[rank].allReduce(m, m, 1, DataType.FLOAT32, ReduceOp.SUM);
            return m.get(ValueLayout.JAVA_FLOAT, 0);
        });
    }

}
