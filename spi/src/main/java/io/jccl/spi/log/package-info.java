/**
 * Logging as NCCL does it: {@link io.jccl.spi.log.DebugLogger} is the {@link io.jccl.spi.NetLogger}
 * configured by {@code NCCL_DEBUG}, {@code NCCL_DEBUG_SUBSYS} and {@code NCCL_DEBUG_FILE}.
 */
package io.jccl.spi.log;
