/**
 * Inputs whose collective results are known exactly, in the spirit of nccl-tests'
 * {@code verifiable}: small integers, so that sums, products, maxima and averages are exact in
 * every type whatever order a reduction takes. {@code jccl perf} and the tests check results with
 * it.
 */
package io.jccl.core.check;
