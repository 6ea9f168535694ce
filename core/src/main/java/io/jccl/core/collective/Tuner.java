package io.jccl.core.collective;

import java.util.Set;

/**
 * Chooses the algorithm of each collective by NCCL's model: the time of a call is a latency plus
 * its bytes over a bandwidth, per algorithm, and the fastest predicted wins. Every rank builds the
 * same tuner from rank 0's settings, so all choose alike for the same call.
 *
 * <p>A ring all-reduce takes {@code 2(n-1)} steps one after the other and moves
 * {@code 2(n-1)/n} times the data through each rank; a tree all-reduce takes {@code 2 depth}
 * hops and moves the data about once up and once down, with more copies per rank (an inner node
 * adds two children's sums and feeds two children). Trees therefore win up to some size and
 * rings above it; the constants below are what makes the crossover land where measurements put it
 * (see {@code bench/trees/README.md}, "Rings against trees"). Where every pair of ranks is equally far
 * apart through the network, halving-doubling all-reduces on a power of two of ranks: a ring's
 * traffic (less than a tree's) in as many rounds as a tree's hops (fewer than a ring's steps), so
 * it wins up to the size where the ring's overlapping steps catch up (about 1 MiB on 4 ranks,
 * 600 KiB on 8; about 40 MiB on 4 ranks with two per core).
 */
public final class Tuner {
    /** The collectives the tuner chooses for. */
    public enum Collective {
        ALL_REDUCE, BROADCAST, REDUCE, ALL_GATHER, REDUCE_SCATTER;

        boolean hasTree() {
            return this == ALL_REDUCE || this == BROADCAST || this == REDUCE;
        }
    }

    /**
     * Costs of one path, fitted to measurements ({@code bench/trees/crossover.sh}).
     *
     * @param ringStepMicros          time of one ring step of a small message
     * @param treeHopMicrosPerRank    time of one tree hop, per rank of the communicator: a hop
     *                                waits on two children and feeds two, and measured hops got
     *                                slower as more ranks shared the host (JcclSocket on a
     *                                16-core host: a tree's 64 KiB all-reduce on 8 ranks took 2.1
     *                                to 5 times its time on 4, for 6 hops instead of 4)
     * @param bytesPerMicro           bytes a rank of 4 moves per microsecond, ring or tree alike
     * @param sharedBandwidth         whether the ranks share that bandwidth (loopback TCP: a rank of
     *                                8 gets half of a rank of 4's), else each rank has its own
     * @param treeEfficiency          a tree's bandwidth per byte it moves relative to the ring's:
     *                                below 1, as a tree's slices wait on two children and feed two
     */
    public record Costs(double ringStepMicros, double treeHopMicrosPerRank, double bytesPerMicro,
                        boolean sharedBandwidth, double treeEfficiency) {
        double bandwidth(int nranks) {
            return sharedBandwidth ? bytesPerMicro * 4 / Math.max(1, nranks) : bytesPerMicro;
        }
    }

    /**
     * Shared memory (all ranks on one host). 16-core host, 4 and 8 ranks, LL off: the ring's steps
     * take 1.2 to 1.3 us, a tree's hops 1.0 (4 ranks) to 3.9 (8), and the ring is faster from
     * 64 KiB up at both counts, so above the LL threshold rings run.
     */
    public static final Costs SHARED_MEMORY = new Costs(1.25, 0.3, 3600, false, 0.8);
    /**
     * A network transport between ranks: JcclSocket on loopback, same 16-core host, two runs of
     * two rounds: trees are faster up to 256 KiB and rings from 512 KiB, on 4 ranks (64 KiB: 334
     * against 554 us) and on 8 (64 KiB: 810 against 1142; 512 KiB: 3812 against 2476). Both
     * crossovers at about 384 KiB fix the step and hop costs, as a tree's hop grew with the ranks
     * on the host and a ring's step did not.
     */
    public static final Costs NETWORK = new Costs(51, 11.3, 2500, true, 0.87);

    private final int nranks;
    private final int depth;
    private final Set<Algorithm> allowed;
    private final Costs costs;
    private final boolean collNet;
    private final boolean halvingDoubling;
    private final double oversubscription;
    private final int ranksPerHost;

    /**
     * CollNet's hops: a rank's data goes to its host's head, to the aggregator, back, and to the
     * rank again, as a ring's four steps would.
     */
    static final int COLLNET_HOPS = 4;
    /** CollNet's bandwidth per byte relative to a ring's: the head's copies and reductions cost some. */
    static final double COLLNET_EFFICIENCY = 0.9;

    /**
     * @param nranks  ranks of the communicator
     * @param allowed NCCL_ALGO's algorithms
     * @param costs   the costs of the path between ranks
     */
    public Tuner(int nranks, Set<Algorithm> allowed, Costs costs) {
        this(nranks, allowed, costs, false);
    }

    /**
     * @param collNet whether the communicator has CollNet (NCCL_COLLNET_ENABLE and a transport)
     */
    public Tuner(int nranks, Set<Algorithm> allowed, Costs costs, boolean collNet) {
        this(nranks, allowed, costs, collNet, false);
    }

    /**
     * @param halvingDoubling whether every pair of ranks is as far apart as any other, through the
     *                        network (one rank per host, or every rank on one host with shared
     *                        memory off): only then does halving-doubling, whose partners change
     *                        every round, move no more over any link than a ring
     */
    public Tuner(int nranks, Set<Algorithm> allowed, Costs costs, boolean collNet, boolean halvingDoubling) {
        this(nranks, allowed, costs, collNet, halvingDoubling, 1);
    }

    /**
     * @param oversubscription the most ranks per core on any host of the communicator (at least
     *                         1; the same on every rank): a halving-doubling round waits on one
     *                         partner, and its pairs move while the other ranks are off their
     *                         cores, so its rounds cost that much less beside a ring's steps
     */
    public Tuner(int nranks, Set<Algorithm> allowed, Costs costs, boolean collNet, boolean halvingDoubling,
                 double oversubscription) {
        this(nranks, allowed, costs, collNet, halvingDoubling, oversubscription, 1);
    }

    /**
     * @param ranksPerHost where above 1, the hosts hold equal blocks of that many ranks and
     *                     halving-doubling pairs inside a host first
     *                     ({@link OperationBuilder.HalvingDoublingLinks#partners(int, int, int)}):
     *                     only its last rounds, which move the least, cross hosts, so that a rank
     *                     sends {@code 2(h-1)/h} of the buffer between hosts ({@code h} hosts)
     *                     where a ring, which crosses hosts on every step, sends {@code 2(n-1)/n}
     */
    public Tuner(int nranks, Set<Algorithm> allowed, Costs costs, boolean collNet, boolean halvingDoubling,
                 double oversubscription, int ranksPerHost) {
        this.ranksPerHost = Math.max(1, ranksPerHost);
        this.oversubscription = Math.max(1, oversubscription);
        this.halvingDoubling = halvingDoubling;
        this.nranks = nranks;
        this.depth = DoubleBinaryTree.depth(nranks);
        this.allowed = Set.copyOf(allowed);
        this.costs = costs;
        this.collNet = collNet;
    }

    /**
     * @return the algorithm for a call of {@code bytes} (the buffer of all-reduce, broadcast and
     *         reduce): the fastest predicted among those NCCL_ALGO allows that can run the
     *         collective here; rings when none can
     */
    public Algorithm choose(Collective collective, long bytes) {
        return choose(collective, bytes, true);
    }

    /**
     * @param collNetUsable false where CollNet cannot take this call (its transport does not
     *                      reduce the type and operation)
     * @return as {@link #choose(Collective, long)}, CollNet only where usable
     */
    public Algorithm choose(Collective collective, long bytes, boolean collNetUsable) {
        Algorithm best = null;
        double fastest = Double.MAX_VALUE;
        for (Algorithm a : Algorithm.values()) {
            if (!allowed.contains(a) || !applies(a, collective) || (a == Algorithm.COLLNET && !collNetUsable)) {
                continue;
            }
            double t = predictMicros(a, collective, bytes);
            if (t < fastest) {
                best = a;
                fastest = t;
            }
        }
        return best == null ? Algorithm.RING : best;
    }

    private boolean applies(Algorithm a, Collective collective) {
        return switch (a) {
            case RING -> true;
            case TREE -> collective.hasTree() && nranks >= 3;
            case COLLNET -> collNet && collective == Collective.ALL_REDUCE;
            case HALVING_DOUBLING -> halvingDoubling && collective == Collective.ALL_REDUCE && nranks >= 4
                    && Integer.bitCount(nranks) == 1;
        };
    }

    /**
     * Halving-doubling's bandwidth per byte relative to a ring's: its rounds do not overlap. 16-core
     * host, JcclSocket, 2 channels, best of 2 rounds: 4 ranks 64 MiB 37.9 ms against the ring's
     * 28.9, 16 MiB 8.9 against 6.5; 8 ranks 64 MiB 80.4 against 65.5, 16 MiB 23.4 against 21.4, 8 MiB
     * 12.0 against 11.4 (bench/trees/README.md).
     */
    static final double HALVING_DOUBLING_EFFICIENCY = 0.83;

    /**
     * How much longer a ring all-reduce's step takes, per extra rank on each core, beside
     * halving-doubling. 4 ranks through TCP on the 2-core build machine, out-of-place us, 3
     * alternating rounds of each (2026-11-28): 4 MiB halving-doubling 7858, 11865, 9149 against
     * the ring's 6913, 11314, 12013; 8 MiB 19433, 14520, 22462 against 18117, 14898, 16350; 16 MiB
     * 28286, 34588, 37566 against 41958, 32686, 36566; 32 MiB 52411, 62634, 71538 against 71292,
     * 64808, 74412; 64 MiB (2 rounds) 180025, 172897 against 133561, 132485. So halving-doubling
     * is as fast or faster up to 32 MiB and the ring from 64 MiB: with this the model's crossover
     * on 4 ranks with two per core is about 40 MiB (it was 1.7 MiB).
     */
    static final double OVERSUBSCRIBED_RING_STEP_WAIT = 16;

    /** @return whether CollNet can run all-reduce on this communicator */
    public boolean hasCollNet() {
        return collNet;
    }

    /**
     * @return the model's time of a call, in microseconds
     */
    public double predictMicros(Algorithm algorithm, Collective collective, long bytes) {
        int n = nranks;
        boolean allReduce = collective == Collective.ALL_REDUCE;
        if (algorithm == Algorithm.COLLNET) {
            // Every rank sends its data once and receives the result once.
            return COLLNET_HOPS * costs.ringStepMicros() + bytes / (costs.bandwidth(n) * COLLNET_EFFICIENCY);
        }
        if (algorithm == Algorithm.HALVING_DOUBLING) {
            // A ring's traffic in 2 log2(n) rounds, each an exchange with one partner: a round
            // waits on one rank, as a tree's hop does, not on the whole ring; but a round starts
            // only once the last has ended, where a ring's steps overlap slice by slice. With more
            // ranks than cores a round's pairs move while the other ranks wait for a core, where
            // a ring's step needs the ranks it passes through to run in turn: its latency counts
            // 1/oversubscription (and the ring's steps count more, below).
            // With blocks of ranks per host only the bytes of the rounds between hosts count:
            // those inside a host go through shared memory.
            int rounds = 2 * Integer.numberOfTrailingZeros(Integer.highestOneBit(Math.max(1, n)));
            int hosts = Math.max(1, n / ranksPerHost);
            return rounds * costs.treeHopMicrosPerRank() * n / oversubscription + bytes * 2.0 * (hosts - 1) / hosts
                    / (costs.bandwidth(n) * HALVING_DOUBLING_EFFICIENCY);
        }
        if (algorithm == Algorithm.TREE) {
            int hops = allReduce ? 2 * depth : depth;
            // Every rank sends and receives the data once per direction (half in each tree: all of
            // it in the tree where it forwards to two children, none in the one where it is a leaf).
            double traffic = allReduce ? 2.0 : 1.0;
            return hops * costs.treeHopMicrosPerRank() * n + bytes * traffic / (costs.bandwidth(n)
                    * costs.treeEfficiency());
        }
        int steps = allReduce ? 2 * (n - 1) : n - 1;
        double traffic = allReduce ? 2.0 * (n - 1) / n : collective == Collective.BROADCAST
                || collective == Collective.REDUCE ? 1.0 : (n - 1.0) / n;
        double stepMicros = costs.ringStepMicros();
        if (applies(Algorithm.HALVING_DOUBLING, collective)) {
            // Beside halving-doubling only (where it was measured): with more ranks than cores a
            // ring step's slices pass through ranks that wait for a core in turn.
            stepMicros *= 1 + OVERSUBSCRIBED_RING_STEP_WAIT * (oversubscription - 1);
        }
        return steps * stepMicros + bytes * traffic / costs.bandwidth(n);
    }

    /** @return the algorithms NCCL_ALGO allows */
    public Set<Algorithm> allowed() {
        return allowed;
    }
}
