/**
 * Collectives on GPU buffers, ordered on CUDA streams as NCCL's are: the call queues its part on the
 * caller's stream and returns; the proxy starts the operation when the stream reaches it and lets
 * the stream go on when it ends. {@link io.jccl.core.device.StreamBridge} holds, per communicator,
 * the pinned words the GPU and the proxy hand each operation over with (stream memory operations
 * write and wait on them) and the pinned host staging the data crosses the network from.
 */
package io.jccl.core.device;
