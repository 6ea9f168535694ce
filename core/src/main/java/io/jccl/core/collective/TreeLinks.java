package io.jccl.core.collective;

import io.jccl.core.transport.RecvConnection;
import io.jccl.core.transport.SendConnection;

/**
 * A rank's connections in one tree of one channel ({@link DoubleBinaryTree}): both directions to
 * its parent (none at the root) and to each child.
 *
 * @param tree         0 or 1
 * @param toParent     sums go up; {@code null} at the root
 * @param fromParent   results come down; {@code null} at the root
 * @param toChildren   results go down, in the order of {@link DoubleBinaryTree.Node#children()}
 * @param fromChildren sums come up, same order
 */
public record TreeLinks(int tree, SendConnection toParent, RecvConnection fromParent, SendConnection[] toChildren,
                        RecvConnection[] fromChildren) {
}
