package io.jccl.core.collective;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DoubleBinaryTreeTest {

    /** Every shape from 1 to 130 ranks, every root: two proper trees whose parents and children agree. */
    @Test
    void everyRankHasOneParentAndItsParentListsItAsAChild() {
        for (int n = 1; n <= 130; n++) {
            for (int root : new int[] {0, 1, n / 2, n - 1}) {
                if (root >= n) {
                    continue;
                }
                for (int tree = 0; tree < 2; tree++) {
                    int[] seen = new int[n];
                    for (int r = 0; r < n; r++) {
                        DoubleBinaryTree.Node node = DoubleBinaryTree.node(n, r, root, tree);
                        String where = "n " + n + " root " + root + " tree " + tree + " rank " + r;
                        assertEquals(r == root, node.isRoot(), where);
                        assertTrue(node.children().length <= 2, where + ": " + node.children().length + " children");
                        if (!node.isRoot()) {
                            int[] siblings = DoubleBinaryTree.node(n, node.parent(), root, tree).children();
                            assertTrue(contains(siblings, r), where + ": parent " + node.parent()
                                    + " does not list it among " + java.util.Arrays.toString(siblings));
                        }
                        for (int c : node.children()) {
                            seen[c]++;
                            assertEquals(r, DoubleBinaryTree.node(n, c, root, tree).parent(), where + " child " + c);
                        }
                    }
                    for (int r = 0; r < n; r++) {
                        assertEquals(r == root ? 0 : 1, seen[r], "n " + n + " rank " + r + " is a child this often");
                    }
                    // From every rank the root is reached without a cycle.
                    for (int r = 0; r < n; r++) {
                        int hops = 0;
                        for (int at = r; at != root; at = DoubleBinaryTree.node(n, at, root, tree).parent()) {
                            assertTrue(++hops <= n, "n " + n + " rank " + r + ": a cycle");
                        }
                        assertTrue(hops <= DoubleBinaryTree.depth(n), "n " + n + " rank " + r + " is " + hops
                                + " hops deep, more than depth " + DoubleBinaryTree.depth(n));
                    }
                }
            }
        }
    }

    /** The point of two trees: a rank that forwards in one is a leaf in the other, so no rank carries twice. */
    @Test
    void noRankOtherThanTheRootForwardsInBothTrees() {
        for (int n = 3; n <= 130; n++) {
            for (int root : new int[] {0, n - 1}) {
                int both = 0;
                List<Integer> loaded = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    int c0 = DoubleBinaryTree.node(n, r, root, 0).children().length;
                    int c1 = DoubleBinaryTree.node(n, r, root, 1).children().length;
                    if (r != root && c0 > 0 && c1 > 0) {
                        both++;
                        loaded.add(r);
                    }
                    assertTrue(r == root || c0 + c1 <= 3, "n " + n + " rank " + r + " has " + c0 + " + " + c1
                            + " children");
                }
                assertTrue(both <= 1, "n " + n + " root " + root + ": ranks inner in both trees: " + loaded);
            }
        }
    }

    @Test
    void theRootHasOneChildAndTheShapesAreNcclsForEightRanks() {
        // The in-order tree of 8 positions: 0 -> 4; 4 -> 2, 6; 2 -> 1, 3; 6 -> 5, 7.
        assertArrayEquals(new int[] {4}, DoubleBinaryTree.node(8, 0, 0, 0).children());
        assertArrayEquals(new int[] {2, 6}, DoubleBinaryTree.node(8, 4, 0, 0).children());
        assertArrayEquals(new int[] {1, 3}, DoubleBinaryTree.node(8, 2, 0, 0).children());
        assertArrayEquals(new int[] {5, 7}, DoubleBinaryTree.node(8, 6, 0, 0).children());
        assertEquals(3, DoubleBinaryTree.depth(8));
        // The second tree: positions rotated by one, so rank 3 sits where rank 4 sat.
        assertArrayEquals(new int[] {3}, DoubleBinaryTree.node(8, 0, 0, 1).children());
        // Rooted elsewhere: the same shapes, shifted.
        assertArrayEquals(new int[] {(4 + 5) % 8}, DoubleBinaryTree.node(8, 5, 5, 0).children());
    }

    private static boolean contains(int[] a, int v) {
        for (int x : a) {
            if (x == v) {
                return true;
            }
        }
        return false;
    }
}
