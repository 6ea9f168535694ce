package io.jccl.spi;

/**
 * A connection a transport can register memory on and move data through: a {@link SendComm} or a
 * {@link RecvComm}. The transport's own object; the caller only passes it back.
 */
public interface NetComm {
}
