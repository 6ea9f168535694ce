package io.jccl.core.transport;

import io.jccl.spi.ListenComm;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.MemorySegment;

/**
 * Tests' way to one network connection in one process, without a bootstrap: the two ends
 * {@link ConnectionSetup} would make, over slot buffers the test gives.
 */
public record NetConnectionPair(NetSendConnection send, NetRecvConnection recv) implements AutoCloseable {
    /**
     * @param sendBuffer the sender's {@code NCCL_STEPS x slotBytes} slots
     * @param recvBuffer the receiver's
     */
    public static NetConnectionPair connect(NetPlugin net, int sender, int receiver, MemorySegment sendBuffer,
                                            MemorySegment recvBuffer, int slotBytes) throws NetException {
        return connect(net, sender, receiver, sendBuffer, recvBuffer, slotBytes, false);
    }

    /** @param flushes whether the receiving end flushes each receive (as for slots in GPU memory) */
    public static NetConnectionPair connect(NetPlugin net, int sender, int receiver, MemorySegment sendBuffer,
                                            MemorySegment recvBuffer, int slotBytes, boolean flushes)
            throws NetException {
        NetHandle handle = NetHandle.allocate();
        ListenComm listen = net.listen(0, handle);
        SendComm s = null;
        RecvComm r = null;
        long deadline = System.nanoTime() + 20_000_000_000L;
        while (s == null || r == null) {
            if (s == null) {
                s = net.connect(0, handle);
            }
            if (r == null) {
                r = net.accept(listen);
            }
            if (System.nanoTime() - deadline > 0) {
                throw NetException.systemError(net.name() + " did not connect within 20 s");
            }
        }
        net.closeListen(listen);
        NetSendConnection send = new NetSendConnection(net, s, sender, receiver, "send to rank " + receiver, sendBuffer,
                slotBytes);
        send.memoryHandle = net.regMr(s, sendBuffer, PointerType.HOST);
        NetRecvConnection recv = new NetRecvConnection(net, r, sender, "recv from rank " + sender, recvBuffer, slotBytes,
                flushes);
        recv.memoryHandle = net.regMr(r, recvBuffer, PointerType.HOST);
        return new NetConnectionPair(send, recv);
    }

    /** Fills the next send slot with {@code bytes} bytes of 7 and sends them, progressing until a slot is free. */
    public void send(int bytes) throws NetException {
        while (!send.hasRoom()) {
            send.progress();
        }
        send.fillSlot().asSlice(0, bytes).fill((byte) 7);
        send.publish(bytes);
    }

    /** Closes both ends. */
    @Override
    public void close() {
        send.close();
        recv.close();
    }
}
