/**
 * How ranks find each other and keep watch, as NCCL's bootstrap does: a root (started by
 * {@link io.jccl.core.UniqueId#create()} or by rank 0 at {@code NCCL_COMM_ID}) collects every
 * rank's listening address and tells each the address of its ring successor; the ranks then
 * all-gather their {@link io.jccl.core.bootstrap.PeerInfo} around that ring.
 *
 * <p>Every connection starts with {@link io.jccl.core.bootstrap.SecretHandshake}: both ends prove,
 * with an HMAC over fresh nonces, that they know the communicator's secret, which never crosses
 * the wire; anything else is dropped without disturbing the listener. Afterwards
 * {@link io.jccl.core.bootstrap.Bootstrap} carries small tagged messages (transport handles,
 * barriers), heartbeats between ring neighbours, and abort notices, so that a peer that dies or
 * freezes is detected within a bound and every rank learns which one it was.
 */
package io.jccl.core.bootstrap;
