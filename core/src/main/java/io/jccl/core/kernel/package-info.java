/**
 * What a step does to the bytes: copies and element-wise reductions, behind
 * {@link io.jccl.core.kernel.ReductionKernel}, one implementation per kind of memory
 * ({@link io.jccl.core.kernel.MemoryKind}). {@link io.jccl.core.kernel.HostReductionKernel} runs on
 * the proxy thread over host memory; a CUDA kernel fits the same interface for device buffers.
 * {@link io.jccl.core.kernel.HalfFloats} holds the float16/bfloat16 conversions. Native code
 * joins where Java has no instruction for the job: {@code HalfFloatKernel} (16-bit float
 * conversions) and {@code StreamingStoreKernel} (stores past the caches for large destinations),
 * each loading its library from {@code META-INF/native} and saying why where it cannot.
 */
package io.jccl.core.kernel;
