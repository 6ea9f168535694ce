/**
 * JcclSocket: NCCL's ncclNet contract over TCP.
 *
 * <p>Layout: {@link io.jccl.net.socket.SocketNetPlugin} is the transport;
 * {@link io.jccl.net.socket.SocketConfig} holds its variables; {@link io.jccl.net.socket.SocketDevices}
 * picks interfaces as {@code NCCL_SOCKET_IFNAME} does. A connection ({@code SocketSendComm} /
 * {@code SocketRecvComm}) is one control stream plus zero or more data streams plus a liveness socket,
 * on which one thread per plugin ({@code LivenessWatch}) exchanges heartbeats, so that a frozen or
 * unreachable peer is told from a slow one without the data path making a system call. The receiver
 * announces each posted receive with a clear-to-send frame ({@code Wire}); the sender matches its
 * sends against those frames, so a message larger than its buffer fails on both sides instead of
 * being truncated, and nothing is sent that the receiver has no room for. Small messages travel
 * inline on the control stream; large ones are striped in chunks over the data streams, moved
 * without copies between registered memory and the kernel, by the caller of {@code test} or by
 * per-connection I/O threads.
 */
package io.jccl.net.socket;
