package io.jccl.tck.internal.net;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetComm;
import io.jccl.spi.NetException;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One connection under test, both ends in this JVM: its send comm, its receive comm and the
 * registrations made on them. Closing deregisters what is still registered, then closes both ends.
 */
public final class Link implements AutoCloseable {
    private final NetKit kit;
    private final SendComm send;
    private final RecvComm recv;
    private final List<Registration> registrations = new ArrayList<>();
    private boolean sendClosed;
    private boolean recvClosed;

    private record Registration(NetComm comm, MemoryHandle handle) {
    }

    Link(NetKit kit, SendComm send, RecvComm recv) {
        this.kit = kit;
        this.send = send;
        this.recv = recv;
    }

    public SendComm send() {
        return send;
    }

    public RecvComm recv() {
        return recv;
    }

    /** Registers host memory on the send comm; deregistered by {@link #deregister} or {@link #close}. */
    public MemoryHandle registerSend(MemorySegment data) throws NetException {
        return register(send, data);
    }

    /** Registers host memory on the receive comm; deregistered by {@link #deregister} or {@link #close}. */
    public MemoryHandle registerRecv(MemorySegment data) throws NetException {
        return register(recv, data);
    }

    private MemoryHandle register(NetComm comm, MemorySegment data) throws NetException {
        MemoryHandle h = kit.plugin().regMr(comm, data, PointerType.HOST);
        if (h == null) {
            throw new AssertionError("regMr returned null: it must return a handle or throw (spec 5.8)");
        }
        registrations.add(new Registration(comm, h));
        return h;
    }

    /** Deregisters a handle from {@link #registerSend} or {@link #registerRecv}. */
    public void deregister(MemoryHandle handle) throws NetException {
        for (int i = 0; i < registrations.size(); i++) {
            Registration r = registrations.get(i);
            if (r.handle() == handle) {
                registrations.remove(i);
                kit.plugin().deregMr(r.comm(), r.handle());
                return;
            }
        }
        throw new IllegalArgumentException("not a registration of this link");
    }

    /** Closes the send end now (its registrations first); {@link #close} then skips it. */
    public void closeSend() throws NetException {
        if (!sendClosed) {
            sendClosed = true;
            try {
                deregisterAll(send);
            } finally {
                kit.plugin().closeSend(send);
            }
        }
    }

    /** Closes the receive end now (its registrations first); {@link #close} then skips it. */
    public void closeRecv() throws NetException {
        if (!recvClosed) {
            recvClosed = true;
            try {
                deregisterAll(recv);
            } finally {
                kit.plugin().closeRecv(recv);
            }
        }
    }

    private void deregisterAll(NetComm comm) throws NetException {
        NetException first = null;
        for (int i = registrations.size() - 1; i >= 0; i--) {
            Registration r = registrations.get(i);
            if (r.comm() == comm) {
                registrations.remove(i);
                try {
                    kit.plugin().deregMr(r.comm(), r.handle());
                } catch (NetException e) {
                    first = first == null ? e : first;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    /** Deregisters what is left and closes both ends; the first failure is thrown after trying all. */
    @Override
    public void close() throws NetException {
        NetException first = null;
        try {
            closeSend();
        } catch (NetException e) {
            first = e;
        }
        try {
            closeRecv();
        } catch (NetException e) {
            first = first == null ? e : first;
        }
        if (first != null) {
            throw first;
        }
    }
}
