package io.jccl.spi;

/**
 * A listening endpoint returned by {@code listen}; serves any number of {@code accept}s
 * (NetPlugin) or one CollNet {@code connect}.
 */
public interface ListenComm {
}
