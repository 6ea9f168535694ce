/**
 * Connections of the network plugin as the proxy drives them (spec section 9): each
 * {@link io.jccl.core.transport.Connection} is one direction to one peer with a registered buffer
 * cut into {@code NCCL_STEPS} = 8 slots. Counters, not queues, track the slots: on a
 * {@link io.jccl.core.transport.SendConnection} the kernel fills slots and the proxy isends and
 * tests them in order; on a {@link io.jccl.core.transport.RecvConnection} the proxy posts irecvs
 * ahead into free slots and the kernel consumes completed ones.
 * {@link io.jccl.core.transport.ConnectionSetup} makes them: listen, ship the handle through the
 * bootstrap, connect and accept without blocking, register the slots.
 */
package io.jccl.core.transport;
