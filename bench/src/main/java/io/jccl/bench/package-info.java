/**
 * Benchmarks that always measure a baseline in the same run and report ratios against it, as
 * Aeron's samples sit beside raw sockets: {@link io.jccl.bench.NetBenchmark} drives any transport
 * through the SPI, {@link io.jccl.bench.RawSocketBaseline} is the bare OS path, and
 * {@link io.jccl.bench.IoEngineComparison} measures the I/O engines a socket transport can use.
 * Benchmarks report figures; they are not timed tests.
 */
package io.jccl.bench;
