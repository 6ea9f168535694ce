package io.jccl.spi;

/**
 * An operation in flight, returned by {@code isend}, {@code irecv}, {@code iflush} or {@code
 * iallreduce} and polled with {@code test}. Transports pool their requests: once {@code test}
 * reports it done, the object belongs to the transport again and may be returned by a later call.
 */
public interface NetRequest {
}
