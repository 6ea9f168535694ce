/**
 * The low-latency path (NCCL's LL protocol, in spirit): a collective small enough for one slot is
 * run by the calling thread from start to end, without an {@link io.jccl.core.collective.Operation},
 * a queue, a thread hand-off or an allocation. Every rank publishes its contribution once and reads
 * the others' directly (one step instead of a ring's {@code 2(n-1)}):
 * <ul>
 *   <li>ranks that all share a host meet on a {@link io.jccl.core.transport.ShmBoard}, where a
 *       contribution's flag and its first bytes share a cache line, so a reader's one miss brings
 *       both ({@link io.jccl.core.ll.BoardExchange});</li>
 *   <li>otherwise each pair of ranks has its own connections, shared memory or the network
 *       transport, driven by the caller ({@link io.jccl.core.ll.MeshExchange}).</li>
 * </ul>
 * Which path a call takes depends only on what every rank passes (size, type, group), so all
 * ranks agree without talking.
 */
package io.jccl.core.ll;
