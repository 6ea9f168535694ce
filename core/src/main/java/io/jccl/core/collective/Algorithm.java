package io.jccl.core.collective;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * How a collective's data travels between ranks, by NCCL's names ({@code NCCL_ALGO}).
 */
public enum Algorithm {
    /** Around a ring of all ranks: every collective; best bandwidth on a flat network. */
    RING("Ring"),
    /** Up and down two binary trees ({@link DoubleBinaryTree}): all-reduce, broadcast and reduce; fewer hops. */
    TREE("Tree"),
    /**
     * Through a CollNet transport (in-network reduction), all-reduce only: the ranks of a host
     * reduce into the host's first rank, which all-reduces with the other hosts' through CollNet
     * and hands the result back (NCCL's CollNetChain). Needs NCCL_COLLNET_ENABLE=1 and a CollNet
     * transport with a device.
     */
    COLLNET("CollNetChain"),
    /**
     * Recursive halving then doubling between pairs of ranks (Rabenseifner's all-reduce, as MPI
     * libraries run mid-sized all-reduces; {@link HalvingDoublingTask}): all-reduce only, on a
     * power of two of ranks; the ring's traffic in {@code 2 log2 n} rounds of pairwise exchanges
     * instead of {@code 2(n-1)} steps around the whole ring. JCCL's own: NCCL has no such algorithm.
     */
    HALVING_DOUBLING("HalvingDoubling");

    /** NCCL's algorithms that JCCL does not have, accepted in NCCL_ALGO so that NCCL's settings carry over. */
    private static final Set<String> NCCL_ONLY = Set.of("nvls", "nvlstree", "pat");

    private final String ncclName;

    Algorithm(String ncclName) {
        this.ncclName = ncclName;
    }

    /** @return NCCL's name, e.g. {@code Tree} */
    public String ncclName() {
        return ncclName;
    }

    /**
     * NCCL_ALGO: a comma list of algorithms to use, or {@code ^} and a list to leave out, names in
     * any case. CollNet, CollNetChain and CollNetDirect all name {@link #COLLNET}; NCCL's
     * algorithms that JCCL lacks (NVLS, NVLSTree, PAT) are accepted and have no effect.
     *
     * @return the algorithms allowed; every one for {@code null} or blank
     * @throws IllegalArgumentException for an unknown name, or a setting that leaves no JCCL algorithm
     */
    public static Set<Algorithm> parseAllowed(String setting) {
        if (setting == null || setting.isBlank()) {
            return EnumSet.allOf(Algorithm.class);
        }
        String list = setting.strip();
        boolean exclude = list.startsWith("^");
        EnumSet<Algorithm> named = EnumSet.noneOf(Algorithm.class);
        for (String part : (exclude ? list.substring(1) : list).split(",")) {
            String name = part.strip().toLowerCase(Locale.ROOT);
            Algorithm a = switch (name) {
                case "ring" -> RING;
                case "tree" -> TREE;
                case "collnet", "collnetchain", "collnetdirect" -> COLLNET;
                case "halvingdoubling" -> HALVING_DOUBLING;
                default -> null;
            };
            if (a != null) {
                named.add(a);
            } else if (!NCCL_ONLY.contains(name)) {
                throw new IllegalArgumentException("NCCL_ALGO=" + setting + ": unknown algorithm '" + part.strip()
                        + "' (allowed: Ring, Tree, CollNet (CollNetChain, CollNetDirect), HalvingDoubling, and NCCL's NVLS, NVLSTree, "
                        + "PAT, which JCCL does not have; a list, or ^list to exclude)");
            }
        }
        EnumSet<Algorithm> allowed = exclude ? EnumSet.complementOf(named) : named;
        if (allowed.isEmpty()) {
            throw new IllegalArgumentException("NCCL_ALGO=" + setting + " leaves none of JCCL's algorithms (Ring, Tree, CollNet, HalvingDoubling)");
        }
        return allowed;
    }
}
