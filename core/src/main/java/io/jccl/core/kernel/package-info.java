/**
 * What a step does to the bytes: copies and element-wise reductions, behind
 * {@link io.jccl.core.kernel.ReductionKernel}, one implementation per kind of memory
 * ({@link io.jccl.core.kernel.MemoryKind}). {@link io.jccl.core.kernel.HostReductionKernel} runs on
 * the proxy thread over host memory; a CUDA kernel fits the same interface for device buffers.
 * {@link io.jccl.core.kernel.HalfFloats} holds the float16/bfloat16 conversions.
 */
package io.jccl.core.kernel;
