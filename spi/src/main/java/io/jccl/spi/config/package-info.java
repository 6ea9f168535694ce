/**
 * Configuration from environment variables, as NCCL does it: {@link io.jccl.spi.config.Env} reads
 * them, {@link io.jccl.spi.config.EnvVar} documents them.
 *
 * <p>Every module keeps its variables in one class of constants annotated with {@code @EnvVar}; the
 * build checks that README.md's configuration table lists exactly those variables with the same
 * defaults.
 */
package io.jccl.spi.config;
