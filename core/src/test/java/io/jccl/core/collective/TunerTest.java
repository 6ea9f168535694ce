package io.jccl.core.collective;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TunerTest {
    private static final Set<Algorithm> ALL = EnumSet.allOf(Algorithm.class);

    @Test
    void twoRanksAlwaysRunOnTheRing() {
        Tuner t = new Tuner(2, ALL, Tuner.SHARED_MEMORY);
        for (long bytes = 1; bytes <= 1L << 32; bytes *= 4) {
            assertEquals(Algorithm.RING, t.choose(Tuner.Collective.ALL_REDUCE, bytes), bytes + " B");
        }
    }

    /** At most one crossover per rank count, from trees to rings, as the two predictions cross. */
    @Test
    void ringsTakeOverAtOneSizeAndKeepIt() {
        for (Tuner.Costs costs : new Tuner.Costs[] {Tuner.SHARED_MEMORY, Tuner.NETWORK}) {
            for (int n : new int[] {3, 4, 5, 8, 16, 64}) {
                Tuner t = new Tuner(n, ALL, costs);
                Algorithm previous = t.choose(Tuner.Collective.ALL_REDUCE, 1);
                for (long bytes = 2; bytes <= 1L << 34; bytes *= 2) {
                    Algorithm a = t.choose(Tuner.Collective.ALL_REDUCE, bytes);
                    double tree = t.predictMicros(Algorithm.TREE, Tuner.Collective.ALL_REDUCE, bytes);
                    double ring = t.predictMicros(Algorithm.RING, Tuner.Collective.ALL_REDUCE, bytes);
                    assertEquals(tree < ring ? Algorithm.TREE : Algorithm.RING, a, n + " ranks " + bytes + " B");
                    assertTrue(previous == a || a == Algorithm.RING, n + " ranks: trees again at " + bytes + " B");
                    previous = a;
                }
                assertEquals(Algorithm.RING, previous, n + " ranks, 16 GiB");
            }
        }
    }

    /** The choices bench/trees/crossover.sh measured right (16-core host, all_reduce, LL off). */
    @Test
    void theMeasuredCrossoversAreTheTunersOwn() {
        Tuner net4 = new Tuner(4, ALL, Tuner.NETWORK);
        for (long kib : new long[] {64, 128, 256}) {
            assertEquals(Algorithm.TREE, net4.choose(Tuner.Collective.ALL_REDUCE, kib << 10), "4 ranks TCP " + kib + " KiB");
        }
        for (long kib : new long[] {512, 1024, 65536}) {
            assertEquals(Algorithm.RING, net4.choose(Tuner.Collective.ALL_REDUCE, kib << 10), "4 ranks TCP " + kib + " KiB");
        }
        Tuner net8 = new Tuner(8, ALL, Tuner.NETWORK);
        for (long kib : new long[] {64, 128, 256}) {
            assertEquals(Algorithm.TREE, net8.choose(Tuner.Collective.ALL_REDUCE, kib << 10), "8 ranks TCP " + kib + " KiB");
        }
        for (long kib : new long[] {512, 1024, 65536}) {
            assertEquals(Algorithm.RING, net8.choose(Tuner.Collective.ALL_REDUCE, kib << 10), "8 ranks TCP " + kib + " KiB");
        }
        for (int n : new int[] {4, 8}) {
            Tuner shm = new Tuner(n, ALL, Tuner.SHARED_MEMORY);
            for (long kib = 64; kib <= 65536; kib *= 2) {
                assertEquals(Algorithm.RING, shm.choose(Tuner.Collective.ALL_REDUCE, kib << 10), n + " ranks SHM " + kib
                        + " KiB");
            }
        }
    }

    @Test
    void ncclAlgoNarrowsTheChoiceAndCollectivesWithoutTreesStayOnRings() {
        Tuner treesOnly = new Tuner(8, Algorithm.parseAllowed("Tree"), Tuner.NETWORK);
        assertEquals(Algorithm.TREE, treesOnly.choose(Tuner.Collective.ALL_REDUCE, 1L << 32));
        assertEquals(Algorithm.TREE, treesOnly.choose(Tuner.Collective.BROADCAST, 1L << 32));
        assertEquals(Algorithm.RING, treesOnly.choose(Tuner.Collective.ALL_GATHER, 1));
        assertEquals(Algorithm.RING, treesOnly.choose(Tuner.Collective.REDUCE_SCATTER, 1));
        Tuner ringsOnly = new Tuner(8, Algorithm.parseAllowed("^tree"), Tuner.NETWORK);
        assertEquals(Algorithm.RING, ringsOnly.choose(Tuner.Collective.ALL_REDUCE, 1));
        assertEquals(EnumSet.of(Algorithm.RING), Algorithm.parseAllowed("Ring,PAT"));
        assertEquals(EnumSet.of(Algorithm.RING, Algorithm.COLLNET), Algorithm.parseAllowed("Ring,CollNetDirect"));
        assertEquals(EnumSet.of(Algorithm.COLLNET), Algorithm.parseAllowed("collnet,CollNetChain"));
        assertEquals(ALL, Algorithm.parseAllowed(" "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Algorithm.parseAllowed("NVLS"));
        assertTrue(e.getMessage().startsWith("NCCL_ALGO=NVLS leaves none"), e.getMessage());
    }

    /**
     * CollNet moves every rank's data once each way, a ring 2(n-1)/n times: from 3 ranks up it wins
     * large all-reduces, at 2 it never does (same traffic, more hops); it runs all-reduce only, and
     * only where the communicator has it and its transport reduces the pair.
     */
    @Test
    void collNetTakesLargeAllReducesOfThreeRanksOrMoreWhereItIsUsable() {
        Tuner four = new Tuner(4, ALL, Tuner.NETWORK, true);
        assertEquals(Algorithm.COLLNET, four.choose(Tuner.Collective.ALL_REDUCE, 64L << 20));
        assertEquals(Algorithm.RING, four.choose(Tuner.Collective.ALL_GATHER, 64L << 20));
        assertEquals(Algorithm.RING, four.choose(Tuner.Collective.ALL_REDUCE, 64L << 20, false));
        Tuner two = new Tuner(2, ALL, Tuner.NETWORK, true);
        assertEquals(Algorithm.RING, two.choose(Tuner.Collective.ALL_REDUCE, 64L << 20));
        Tuner without = new Tuner(4, ALL, Tuner.NETWORK, false);
        assertEquals(Algorithm.RING, without.choose(Tuner.Collective.ALL_REDUCE, 64L << 20));
        Tuner forced = new Tuner(2, Algorithm.parseAllowed("CollNet"), Tuner.NETWORK, true);
        assertEquals(Algorithm.COLLNET, forced.choose(Tuner.Collective.ALL_REDUCE, 1));
        assertEquals(Algorithm.RING, forced.choose(Tuner.Collective.BROADCAST, 1));
    }

    /**
     * Where every pair of ranks is equally far apart through the network, halving-doubling takes
     * all-reduces on a power of two of ranks (from 4) up to the size where the ring's overlapping
     * steps catch up, and rings take them above (16-core host, JcclSocket: on 8 ranks
     * halving-doubling led from 512 KiB to 4 MiB, the ring from 8 MiB; on 4 ranks the ring from 4
     * MiB). Not on 2 ranks (it would be the ring's two steps), not on 6 (no pairing), not where ranks
     * share hosts (its partners then cross the network more than the ring's neighbours), never for
     * other collectives, and not when NCCL_ALGO leaves it out.
     */
    @Test
    void halvingDoublingTakesAllReducesOnAPowerOfTwoOfEquallyDistantRanks() {
        for (int n : new int[] {4, 8}) {
            Tuner t = new Tuner(n, ALL, Tuner.NETWORK, false, true);
            for (long bytes = 1; bytes <= 512 << 10; bytes *= 4) {
                assertEquals(Algorithm.HALVING_DOUBLING, t.choose(Tuner.Collective.ALL_REDUCE, bytes), n + " ranks, " + bytes
                        + " B");
            }
            for (long bytes = 8 << 20; bytes <= 1L << 34; bytes *= 4) {
                assertEquals(Algorithm.RING, t.choose(Tuner.Collective.ALL_REDUCE, bytes), n + " ranks, " + bytes + " B");
            }
            assertEquals(Algorithm.RING, t.choose(Tuner.Collective.ALL_GATHER, 1 << 20));
            assertTrue(Set.of(Algorithm.RING, Algorithm.TREE).contains(t.choose(Tuner.Collective.BROADCAST, 1 << 20)));
            assertEquals(Algorithm.RING, new Tuner(n, Algorithm.parseAllowed("Ring"), Tuner.NETWORK, false, true)
                    .choose(Tuner.Collective.ALL_REDUCE, 1 << 20));
            assertEquals(Algorithm.RING, new Tuner(n, Algorithm.parseAllowed("^HalvingDoubling,Tree"), Tuner.NETWORK,
                    false, true).choose(Tuner.Collective.ALL_REDUCE, 1 << 20));
        }
        assertEquals(Algorithm.RING, new Tuner(2, ALL, Tuner.NETWORK, false, true).choose(Tuner.Collective.ALL_REDUCE, 1 << 20));
        for (long bytes : new long[] {64 << 10, 1 << 20, 64 << 20}) {
            assertTrue(new Tuner(6, ALL, Tuner.NETWORK, false, true).choose(Tuner.Collective.ALL_REDUCE, bytes)
                    != Algorithm.HALVING_DOUBLING, "6 ranks");
            assertTrue(new Tuner(4, ALL, Tuner.NETWORK, false, false).choose(Tuner.Collective.ALL_REDUCE, bytes)
                    != Algorithm.HALVING_DOUBLING, "ranks sharing hosts");
        }
        assertEquals(Algorithm.HALVING_DOUBLING, new Tuner(4, Algorithm.parseAllowed("halvingdoubling"), Tuner.NETWORK,
                false, true).choose(Tuner.Collective.ALL_REDUCE, 8));
    }

    /**
     * With two ranks per core, halving-doubling's rounds move while the other pair waits for a
     * core, and a ring's steps wait for ranks to get one in turn: 4 ranks through TCP on the 2-core
     * build machine, halving-doubling was as fast or faster than the ring up to 32 MiB and slower
     * at 64 MiB (Tuner.OVERSUBSCRIBED_RING_STEP_WAIT), where with a core each the ring wins from
     * about 1 MiB; rings and trees among themselves choose as before.
     */
    @Test
    void halvingDoublingTakesLargerAllReducesWhenRanksShareCores() {
        Tuner own = new Tuner(4, ALL, Tuner.NETWORK, false, true, 1);
        Tuner shared = new Tuner(4, ALL, Tuner.NETWORK, false, true, 2);
        assertEquals(Algorithm.RING, own.choose(Tuner.Collective.ALL_REDUCE, 1 << 20));
        assertEquals(Algorithm.RING, own.choose(Tuner.Collective.ALL_REDUCE, 4 << 20));
        for (long bytes : new long[] {1 << 20, 4 << 20, 32 << 20}) {
            assertEquals(Algorithm.HALVING_DOUBLING, shared.choose(Tuner.Collective.ALL_REDUCE, bytes), bytes + " B");
        }
        assertEquals(Algorithm.RING, shared.choose(Tuner.Collective.ALL_REDUCE, 64 << 20));
        assertEquals(Algorithm.RING, shared.choose(Tuner.Collective.ALL_GATHER, 1 << 20), "only all-reduce has halving-doubling");
        assertEquals(Algorithm.RING, new Tuner(4, ALL, Tuner.NETWORK, false, true, 0.5)
                .choose(Tuner.Collective.ALL_REDUCE, 1 << 20), "fewer ranks than cores counts as one per core");
        for (long bytes = 1; bytes <= 1L << 30; bytes *= 4) {
            assertEquals(new Tuner(3, ALL, Tuner.NETWORK, false, false, 1).choose(Tuner.Collective.ALL_REDUCE, bytes),
                    new Tuner(3, ALL, Tuner.NETWORK, false, false, 3).choose(Tuner.Collective.ALL_REDUCE, bytes),
                    bytes + " B on 3 ranks");
        }
    }

    /**
     * Ranks in blocks per host: halving-doubling pairs inside a host first, and sends
     * {@code 2(h-1)/h} of the buffer between {@code h} hosts where the ring sends {@code 2(n-1)/n}
     * (2 hosts of 2: half against three quarters, each way), so it takes all-reduces of every size
     * there; with as many hosts as ranks the model is the flat one.
     */
    @Test
    void halvingDoublingTakesEverySizeWhereHostsHoldBlocksOfRanks() {
        Tuner twoOfTwo = new Tuner(4, ALL, Tuner.NETWORK, false, true, 1, 2);
        for (long bytes = 1; bytes <= 1L << 32; bytes *= 4) {
            assertEquals(Algorithm.HALVING_DOUBLING, twoOfTwo.choose(Tuner.Collective.ALL_REDUCE, bytes), bytes + " B");
        }
        assertTrue(twoOfTwo.predictMicros(Algorithm.HALVING_DOUBLING, Tuner.Collective.ALL_REDUCE, 64 << 20)
                < new Tuner(4, ALL, Tuner.NETWORK, false, true, 1, 1)
                .predictMicros(Algorithm.HALVING_DOUBLING, Tuner.Collective.ALL_REDUCE, 64 << 20));
        Tuner flat = new Tuner(4, ALL, Tuner.NETWORK, false, true, 1);
        for (long bytes = 1; bytes <= 1L << 32; bytes *= 4) {
            assertEquals(flat.choose(Tuner.Collective.ALL_REDUCE, bytes),
                    new Tuner(4, ALL, Tuner.NETWORK, false, true, 1, 1).choose(Tuner.Collective.ALL_REDUCE, bytes), bytes + " B");
        }
        assertEquals(Algorithm.RING, new Tuner(4, ALL, Tuner.NETWORK, false, true, 1, 2)
                .choose(Tuner.Collective.ALL_GATHER, 1 << 20), "only all-reduce has halving-doubling");
    }

    /**
     * The partners of blocks per host: distance 1, 2, 4 (inside a host of 2 first, then across),
     * each rank at its bits reversed in the task's order, so that the task's own distances n/2,
     * n/4, ... between places are the ranks' 1, 2, ...; without blocks, the flat order.
     */
    @Test
    void halvingDoublingInBlocksPerHostPairsInsideAHostFirst() {
        assertArrayEquals(new int[] {4, 7, 1}, OperationBuilder.HalvingDoublingLinks.partners(8, 5, 2));
        assertArrayEquals(new int[] {1, 7, 4}, OperationBuilder.HalvingDoublingLinks.partners(8, 5, 1));
        for (int n : new int[] {4, 8, 16}) {
            int rounds = Integer.numberOfTrailingZeros(n);
            for (int rank = 0; rank < n; rank++) {
                int place = OperationBuilder.HalvingDoublingLinks.position(n, rank, 2);
                int[] partners = OperationBuilder.HalvingDoublingLinks.partners(n, rank, 2);
                for (int r = 0; r < rounds; r++) {
                    int partnersPlace = OperationBuilder.HalvingDoublingLinks.position(n, partners[r], 2);
                    assertEquals(place ^ (n >> (r + 1)), partnersPlace, n + " ranks, rank " + rank + ", round " + r);
                }
                assertEquals(rank, OperationBuilder.HalvingDoublingLinks.position(n, rank, 1));
            }
        }
        assertEquals(1, OperationBuilder.HalvingDoublingLinks.position(4, 2, 2));
        assertEquals(2, OperationBuilder.HalvingDoublingLinks.position(4, 1, 2));
    }
}
