package io.jccl.spi;

/**
 * The sending end of a connection, returned by {@link NetPlugin#connect}. Owned by the transport;
 * used by one thread at a time.
 */
public interface SendComm extends NetComm {
}
