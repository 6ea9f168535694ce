package io.jccl.core;

import io.jccl.core.check.VerifiableData;
import io.jccl.spi.DataType;
import io.jccl.spi.NetResult;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NCCL's group semantics: grouped sends and receives cannot deadlock, whatever the order of the calls. */
class GroupTest {
    static LocalRanks ranks;

    @BeforeAll
    static void start() {
        ranks = new LocalRanks(4, CommConfig.builder().bufferSize(16 << 10).p2pChunkSize(1 << 10)
                .timeout(Duration.ofSeconds(20)).build());
    }

    @AfterAll
    static void stop() {
        ranks.close();
    }

    static final DataType T = DataType.INT32;

    static MemorySegment filled(int rank, long count, long seed) {
        MemorySegment m = Arena.ofAuto().allocate(Math.max(4, count * 4));
        new VerifiableData(T, null, 4, seed).fill(m, 0, count, rank, 0);
        return m;
    }

    static long wrong(MemorySegment got, int fromRank, long count, long seed) {
        MemorySegment expected = filled(fromRank, count, seed);
        return new VerifiableData(T, null, 4, seed).countWrong(got, 0, expected, 0, count);
    }

    @Test
    void everyRankSendsFirstToItsSuccessorMessagesMuchLargerThanTheSlotsYetNothingDeadlocks() {
        long count = 100_000; // 400 KB through 8 slots of 1 KiB: a send-first ring would deadlock without a group
        List<Long> wrong = ranks.run(rank -> {
            Communicator c = ranks.comms[rank];
            MemorySegment out = filled(rank, count, 7);
            MemorySegment in = Arena.ofAuto().allocate(count * 4);
            Completion done;
            try (Group g = Group.start()) {
                c.sendAsync(out, count, T, (rank + 1) % 4);
                done = c.recvAsync(in, count, T, (rank + 3) % 4);
            }
            done.await();
            return wrong(in, (rank + 3) % 4, count, 7);
        });
        assertEquals(List.of(0L, 0L, 0L, 0L), wrong);
    }

    @Test
    void allPairsInOneGroupInShuffledOrderIncludingSelf() {
        long count = 3_001;
        List<Long> wrong = ranks.run(rank -> {
            Communicator c = ranks.comms[rank];
            MemorySegment[] in = new MemorySegment[4];
            List<Runnable> calls = new ArrayList<>();
            for (int p = 0; p < 4; p++) {
                int peer = p;
                in[p] = Arena.ofAuto().allocate(count * 4);
                MemorySegment out = filled(rank, count, 100 + peer);
                calls.add(() -> c.sendAsync(out, count, T, peer));
                calls.add(() -> c.recvAsync(in[peer], count, T, peer));
            }
            Collections.shuffle(calls, new Random(rank));
            Completion done = null;
            try (Group g = Group.start()) {
                for (Runnable call : calls) {
                    call.run();
                }
                done = c.recvAsync(in[rank], 0, T, rank);
                c.sendAsync(in[rank], 0, T, rank);
            }
            done.await();
            long bad = 0;
            for (int p = 0; p < 4; p++) {
                bad += wrong(in[p], p, count, 100 + rank);
            }
            return bad;
        });
        assertEquals(List.of(0L, 0L, 0L, 0L), wrong);
    }

    @Test
    void sendsToOnePeerArriveInCallOrder() {
        List<Long> wrong = ranks.run(rank -> {
            Communicator c = ranks.comms[rank];
            int peer = rank ^ 1;
            MemorySegment[] in = new MemorySegment[3];
            Completion done;
            try (Group g = Group.start()) {
                for (int k = 0; k < 3; k++) {
                    c.sendAsync(filled(rank, 1000 + k * 1000, k), 1000 + k * 1000, T, peer);
                }
                for (int k = 0; k < 3; k++) {
                    in[k] = Arena.ofAuto().allocate((1000 + k * 1000) * 4L);
                    c.recvAsync(in[k], 1000 + k * 1000, T, peer);
                }
                done = c.recvAsync(in[0], 0, T, peer);
            }
            done.await();
            long bad = 0;
            for (int k = 0; k < 3; k++) {
                bad += wrong(in[k], peer, 1000 + k * 1000, k);
            }
            return bad;
        });
        assertEquals(List.of(0L, 0L, 0L, 0L), wrong);
    }

    @Test
    void collectivesAndSendsInOneGroupRunTogether() {
        long count = 5_000;
        List<Long> wrong = ranks.run(rank -> {
            Communicator c = ranks.comms[rank];
            VerifiableData sum = new VerifiableData(T, ReduceOp.SUM, 4, 3);
            MemorySegment a = Arena.ofAuto().allocate(count * 4);
            sum.fill(a, 0, count, rank, 0);
            MemorySegment in = Arena.ofAuto().allocate(count * 4);
            Completion done;
            try (Group g = Group.start()) {
                c.sendAsync(filled(rank, count, 9), count, T, (rank + 2) % 4);
                c.allReduceAsync(a, a, count, T, ReduceOp.SUM);
                done = c.recvAsync(in, count, T, (rank + 2) % 4);
            }
            done.await();
            MemorySegment expected = Arena.ofAuto().allocate(count * 4);
            sum.fillReduced(expected, 0, count, 0);
            return sum.countWrong(a, 0, expected, 0, count) + wrong(in, (rank + 2) % 4, count, 9);
        });
        assertEquals(List.of(0L, 0L, 0L, 0L), wrong);
    }

    @Test
    void misuseIsRefusedAtTheCall() {
        Communicator c = ranks.comms[0];
        MemorySegment buf = Arena.ofAuto().allocate(64);
        try (Group g = Group.start()) {
            JcclException blocking = assertThrows(JcclException.class, () -> c.send(buf, 1, T, 1));
            assertTrue(blocking.getMessage().contains("inside a group"), blocking.getMessage());
            Completion early = c.sendAsync(buf, 1, T, 0);
            assertThrows(JcclException.class, early::await, "a grouped operation cannot be awaited before the group ends");
            c.recvAsync(buf, 1, T, 0);
        }
        JcclException unpaired = assertThrows(JcclException.class, () -> {
            try (Group g = Group.start()) {
                c.sendAsync(buf, 1, T, 0);
            }
        });
        assertEquals(NetResult.INVALID_USAGE, unpaired.result());
        assertThrows(JcclException.class, () -> c.sendAsync(buf, 100, T, 1), "a 64-byte buffer cannot hold 100 ints");
        assertThrows(JcclException.class, () -> c.sendAsync(buf, 1, T, 4), "there is no rank 4");
        assertThrows(JcclException.class, () -> c.allReduceAsync(buf, buf, -1, T, ReduceOp.SUM));
        try (Arena confined = Arena.ofConfined()) {
            MemorySegment mine = confined.allocate(64);
            JcclException e = assertThrows(JcclException.class, () -> c.allReduceAsync(mine, mine, 1, T, ReduceOp.SUM));
            assertTrue(e.getMessage().contains("confined"), e.getMessage());
        }
        assertThrows(JcclException.class,
                () -> c.allReduceAsync(buf, buf, 1, DataType.FLOAT8_E4M3, ReduceOp.SUM), "no host fp8 arithmetic");
    }
}
