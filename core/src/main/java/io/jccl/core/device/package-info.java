/**
 * Collectives on GPU buffers, ordered on CUDA streams as NCCL's are: the call queues its part on the
 * caller's stream and returns. Three paths:
 * <ul>
 *   <li>{@link io.jccl.core.device.PeerRing}: every rank on one host with a GPU of its own; one
 *       kernel per call writes straight into the next GPU's memory (CUDA IPC or peer access,
 *       NCCL's P2P transport and FIFO protocol, {@code ring.cu}); the host takes no part;</li>
 *   <li>the same kernels through the network: they fill and drain slots of pinned host memory,
 *       which {@link io.jccl.core.device.NetFifo}'s proxy moves through the network transport;</li>
 *   <li>{@link io.jccl.core.device.StreamBridge}: all-to-all, send/recv, or JCCL_NET_FIFO=0; the proxy starts the operation
 *       when the stream reaches it and lets the stream go on when it ends, through pinned words the
 *       GPU and the proxy hand each operation over with (stream memory operations write and wait
 *       on them) and pinned host staging the data crosses the network from.</li>
 * </ul>
 */
package io.jccl.core.device;
