/**
 * The ncclNet / ncclCollNet contract in Java.
 *
 * <p>{@link io.jccl.spi.NetPlugin} mirrors {@code ncclNet_v6_t} function for function and
 * {@link io.jccl.spi.CollNetPlugin} mirrors {@code ncclCollNet_v6_t}. The same interfaces are
 * implemented by Java transports (found with {@link java.util.ServiceLoader}), by the adapter that
 * hosts native {@code libnccl-net*.so} plugins, and exported to real NCCL by the native shim.
 *
 * <p>Rules every implementation follows:
 * <ul>
 *   <li>Data is {@link java.lang.foreign.MemorySegment}: host memory or device memory, addressable by
 *       native code. Nothing is copied into {@code byte[]}.</li>
 *   <li>The data path ({@code isend}, {@code irecv}, {@code iflush}, {@code test}) reports normal
 *       states by return value ({@code null} = would block, {@code false} = not done yet) and can be
 *       implemented without allocating per call: requests are pooled by the transport, sizes are
 *       written into caller-provided arrays.</li>
 *   <li>Failures are {@link io.jccl.spi.NetException}s carrying NCCL's result code.</li>
 * </ul>
 */
package io.jccl.spi;
