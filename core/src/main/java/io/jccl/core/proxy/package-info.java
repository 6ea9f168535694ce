/**
 * The proxy: one progress thread per communicator, NCCL's {@code NCCL Progress} thread, as an
 * Agrona-style duty cycle ({@link io.jccl.core.proxy.Proxy}). Each pass starts newly submitted
 * operations, moves every connection's slots through the plugin (isend, irecv, test), runs the
 * steps of the operation at the head of the queue, and checks the timeout; a pass that did
 * nothing goes to the {@link io.jccl.core.proxy.IdleStrategy}. Nothing on this path allocates.
 */
package io.jccl.core.proxy;
