/**
 * JcclIB, the InfiniBand/RoCE transport: {@link io.jccl.net.ib.IbNetPlugin} and what it is made of.
 *
 * <ul>
 *   <li>Devices: {@code DeviceDiscovery} finds the active ports ({@code HcaFilter},
 *       {@code GidSelector}, {@code LinkSpeed}); {@code Hca} is an opened adapter with its
 *       protection domain, {@code RegistrationCache} and async-event thread.</li>
 *   <li>Connections: {@code IbListenComm}, {@code ConnectHandshake} and {@code AcceptHandshake}
 *       exchange {@code ConnectionInfo} over the TCP {@code SideChannel} that {@code IbHandle}
 *       points to; {@code QueuePair} does the INIT/RTR/RTS transitions.</li>
 *   <li>Data: {@code IbSendComm} and {@code IbRecvComm} (on {@code IbComm}) with the clear-to-send
 *       FIFO ({@code CtsFifo}), pooled requests and {@code WorkId}-tagged completions.</li>
 * </ul>
 *
 * <p>Depends on {@code io.jccl.spi} and on the FFM binding in {@code io.jccl.net.ib.verbs} only.
 */
package io.jccl.net.ib;
