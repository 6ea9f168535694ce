package io.jccl.spi;

/**
 * The receiving end of a connection, returned by {@link NetPlugin#accept}. Owned by the
 * transport; used by one thread at a time.
 */
public interface RecvComm extends NetComm {
}
