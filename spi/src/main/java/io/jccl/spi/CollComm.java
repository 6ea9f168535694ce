package io.jccl.spi;

/**
 * A CollNet communicator over all ranks, returned by {@link CollNetPlugin#connect}.
 */
public interface CollComm {
}
