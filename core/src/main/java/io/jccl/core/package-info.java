/**
 * The engine's API, shaped after NCCL's: one rank creates a {@link io.jccl.core.UniqueId} and
 * passes it to the others out of band (or every rank reads its launcher's variables,
 * {@link io.jccl.core.Communicator#initFromEnvironment()}); each rank then calls
 * {@link io.jccl.core.Communicator#init} and runs collectives on {@link java.lang.foreign.MemorySegment}
 * buffers. Every collective has an asynchronous form that returns a {@link io.jccl.core.Completion}
 * and a blocking form; {@link io.jccl.core.Group} gives NCCL's group semantics.
 *
 * <p>Inside: {@code bootstrap} (root, ring, authenticated messages, peer failure detection),
 * {@code transport} (connections of the network plugin, each a fixed ring of slots),
 * {@code collective} (operations and the ring algorithms as step programs), {@code kernel} (the
 * copies and reductions a step performs, per kind of memory) and {@code proxy} (the progress
 * thread that drives the plugin and the kernel).
 */
package io.jccl.core;
