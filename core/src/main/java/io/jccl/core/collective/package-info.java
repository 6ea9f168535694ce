/**
 * Operations and the algorithms that carry them out. An {@link io.jccl.core.collective.Operation}
 * (one collective, or one group's sends and receives) is a set of
 * {@link io.jccl.core.collective.Task}s that progress independently: one
 * {@link io.jccl.core.collective.RingTask} per channel for a collective, one task per peer and
 * direction for point-to-point. A ring task runs a {@link io.jccl.core.collective.RingAlgorithm}
 * (NCCL's ring all-reduce, all-gather, reduce-scatter, broadcast, reduce), which describes each
 * step of each loop as a {@link io.jccl.core.collective.Step}: whether it receives, reduces with
 * local input, writes output, sends on. Steps are computed, not stored, so an operation of any
 * size costs the same few objects.
 */
package io.jccl.core.collective;
