/**
 * libibverbs through Panama FFM: the exported verbs ({@link io.jccl.net.ib.verbs.Verbs}), the
 * inline data-path verbs through the context's ops table ({@link io.jccl.net.ib.verbs.VerbsOps}),
 * the C structs as {@code MemoryLayout}s checked against {@code verbs.h}
 * ({@link io.jccl.net.ib.verbs.IbvLayouts}) and the enumerators ({@link io.jccl.net.ib.verbs.Ibv}).
 *
 * <p>Nothing here knows about NCCL or the SPI; the transport in {@code io.jccl.net.ib} builds on it.
 */
package io.jccl.net.ib.verbs;
