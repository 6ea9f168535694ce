/**
 * Every variable the engine reads ({@link io.jccl.core.config.CoreConfig}): NCCL's names where NCCL
 * has the same setting, {@code JCCL_*} for the engine's own, and the launchers' variables that
 * {@link io.jccl.core.Communicator#initFromEnvironment()} understands.
 */
package io.jccl.core.config;
