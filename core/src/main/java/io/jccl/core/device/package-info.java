/**
 * Collectives on GPU buffers, ordered on CUDA streams as NCCL's are: the call queues its part on the
 * caller's stream and returns. Two paths:
 * <ul>
 *   <li>{@link io.jccl.core.device.PeerRing}: every rank on one host with a GPU of its own; one
 *       kernel per call writes straight into the next GPU's memory (CUDA IPC or peer access,
 *       NCCL's P2P transport and FIFO protocol, {@code ring.cu}); the host takes no part;</li>
 *   <li>{@link io.jccl.core.device.StreamBridge}: any other layout; the proxy starts the operation
 *       when the stream reaches it and lets the stream go on when it ends, through pinned words the
 *       GPU and the proxy hand each operation over with (stream memory operations write and wait
 *       on them) and pinned host staging the data crosses the network from.</li>
 * </ul>
 */
package io.jccl.core.device;
