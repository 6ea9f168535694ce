package io.jccl.net.ib;

/**
 * Where a peer's queue pairs are: what RTR needs besides the peer's QP number.
 *
 * @param linkLayer the peer port's link layer; must equal ours
 * @param mtu       the peer port's active MTU ({@code enum ibv_mtu}); the path uses the smaller
 * @param lid       the peer port's LID (InfiniBand)
 * @param gid       the peer's GID, 16 bytes (RoCE)
 */
record PeerAddress(int linkLayer, int mtu, int lid, byte[] gid) {
}
