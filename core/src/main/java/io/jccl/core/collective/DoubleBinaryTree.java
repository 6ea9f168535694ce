package io.jccl.core.collective;

/**
 * Two binary trees over the same ranks, both rooted at one rank, such that a rank that forwards
 * data in one tree (an inner node) is a leaf in the other: each tree carries half of the data,
 * so every rank sends and receives about as much as in a ring, in {@code log2(n)} hops instead
 * of {@code n - 1} (NCCL's double binary tree, {@code ncclGetBtree}/{@code ncclGetDtree}).
 *
 * <p>The first tree is the in-order binary tree of positions {@code 0 .. n-1}: position
 * {@code p}'s lowest set bit {@code b} gives its level; its children are {@code p - b/2} and
 * {@code p + b/2} (the second brought below {@code n}); position 0, the root, has one child, the
 * highest power of two below {@code n}. Odd positions are leaves. The second tree is the same
 * shape over the non-root ranks rotated by one, so that the odd and even ranks trade places. A
 * rank's position is its distance from the root: {@code (rank - root) mod n}.
 *
 * <p>NCCL roots its second tree elsewhere; rooting both at one rank lets reduce and broadcast use
 * them too (the root is where the data starts or ends). The root has one child in each tree.
 */
public final class DoubleBinaryTree {
    /** No rank: the root's parent, or a missing child. */
    public static final int NONE = -1;

    private DoubleBinaryTree() {
    }

    /**
     * A rank's neighbours in one tree.
     *
     * @param parent   the rank it sends to on the way up, {@link #NONE} for the root
     * @param children the ranks it receives from on the way up (0, 1 or 2), in the order their
     *                 data is added
     */
    public record Node(int parent, int[] children) {
        public boolean isRoot() {
            return parent == NONE;
        }
    }

    /**
     * @param n    ranks
     * @param rank this rank
     * @param root the rank at the top of both trees
     * @param tree 0 or 1
     * @return {@code rank}'s parent and children in tree {@code tree}
     */
    public static Node node(int n, int rank, int root, int tree) {
        if (n < 1 || rank < 0 || rank >= n || root < 0 || root >= n || (tree != 0 && tree != 1)) {
            throw new IllegalArgumentException("no tree node for rank " + rank + " of " + n + ", root " + root
                    + ", tree " + tree);
        }
        int position = Math.floorMod(rank - root, n);
        int p = tree == 0 ? position : rotate(position, n);
        int parent = parentOf(p, n);
        int[] children = childrenOf(p, n);
        for (int i = 0; i < children.length; i++) {
            children[i] = rankAt(children[i], n, root, tree);
        }
        return new Node(parent == NONE ? NONE : rankAt(parent, n, root, tree), children);
    }

    /** @return the longest path from the root to a leaf, in hops */
    public static int depth(int n) {
        int depth = 0;
        for (int p = 1; p < n; p++) {
            int d = 0;
            for (int q = p; q != 0; q = parentOf(q, n)) {
                d++;
            }
            depth = Math.max(depth, d);
        }
        return depth;
    }

    /** Position in the second tree: non-root positions {@code 1 .. n-1} move up by one, n-1 to 1. */
    private static int rotate(int position, int n) {
        return position == 0 || n < 3 ? position : position % (n - 1) + 1;
    }

    private static int unrotate(int p, int n) {
        return p == 0 || n < 3 ? p : p == 1 ? n - 1 : p - 1;
    }

    private static int rankAt(int p, int n, int root, int tree) {
        int position = tree == 0 ? p : unrotate(p, n);
        return (position + root) % n;
    }

    private static int lowestBit(int p, int n) {
        if (p == 0) {
            return Integer.highestOneBit(Math.max(1, n - 1)) << 1;
        }
        return Integer.lowestOneBit(p);
    }

    /**
     * Parent of position {@code p} in the in-order tree of {@code n} positions: the neighbour
     * {@code b} away whose lowest bit is {@code 2b}; past the end, the one {@code b} below
     * (whose lowest bit is higher still; 0, the root, for a power of two).
     */
    private static int parentOf(int p, int n) {
        if (p == 0) {
            return NONE;
        }
        int bit = Integer.lowestOneBit(p);
        int up = (p ^ bit) | (bit << 1);
        return up < n ? up : p ^ bit;
    }

    /** Children of position {@code p}: computed from {@link #parentOf}, so that the two always agree. */
    private static int[] childrenOf(int p, int n) {
        int bit = lowestBit(p, n);
        int[] found = new int[2];
        int count = 0;
        for (int half = bit >> 1; half > 0 && count < 2; half >>= 1) {
            for (int c : new int[] {p - half, p + half}) {
                if (c > 0 && c < n && c != p && parentOf(c, n) == p && (count == 0 || found[0] != c)) {
                    found[count++] = c;
                }
            }
        }
        return java.util.Arrays.copyOf(found, count);
    }
}
