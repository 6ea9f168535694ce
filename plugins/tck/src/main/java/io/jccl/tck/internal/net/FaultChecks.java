package io.jccl.tck.internal.net;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.tck.PeerTransport;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.BoundedCall;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.MessagePattern;
import io.jccl.tck.internal.net.Exchange.Message;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The fault rules ({@code fault.*}): closes with requests in flight, dead peers, garbage. */
public final class FaultChecks {
    /** Larger than loopback socket buffers on both sides, so it cannot complete without the peer. */
    private static final long BIG = 32L << 20;
    private static final long MIB = 1L << 20;
    private static final Set<NetResult> PEER_GONE = EnumSet.of(NetResult.REMOTE_ERROR, NetResult.SYSTEM_ERROR);

    private final NetKit kit;

    public FaultChecks(NetKit kit) {
        this.kit = kit;
    }

    // ---------------------------------------------------------------------------------------------
    // Helpers shared with other rules.

    /**
     * Keeps sending on a comm whose peer is gone until a send fails; sends may still complete for
     * a while (the kernel buffers them), but within the peer-death bound one must fail.
     */
    static void sendsMustFail(NetKit kit, SendComm comm, MemoryHandle mh, MemorySegment data, String context)
            throws NetException {
        requestsMustFail(kit, () -> kit.isend(comm, data, Exchange.TAG, mh), "send", "isend", "to", context);
    }

    /** Posts receives on a comm whose peer is gone; within the peer-death bound one must fail. */
    static void receivesMustFail(NetKit kit, RecvComm comm, MemoryHandle mh, MemorySegment data, String context)
            throws NetException {
        requestsMustFail(kit, () -> kit.irecv(comm, data, Exchange.TAG, mh), "receive", "irecv", "from", context);
    }

    /** What posts one request of the direction under test; null means would-block. */
    private interface Post {
        NetRequest post() throws NetException;
    }

    private static void requestsMustFail(NetKit kit, Post post, String what, String call, String towards,
                                         String context) throws NetException {
        Deadline d = Deadline.after(kit.settings().peerDeathTimeout());
        Backoff idle = new Backoff();
        int completed = 0;
        int nulls = 0;
        NetRequest r = null;
        int[] sizes = new int[1];
        while (!d.expired()) {
            try {
                if (r == null) {
                    r = post.post();
                    nulls += r == null ? 1 : 0;
                }
                if (r != null && kit.test(r, sizes)) {
                    r = null;
                    completed++;
                }
            } catch (NetException e) {
                return;
            }
            idle.idle();
        }
        fail(context + ": no " + what + " failed within " + Deadline.format(d.budget()) + " (" + completed
                + " completed, " + (r != null ? "one still pending" : call + " returned null " + nulls + " times")
                + "): a " + what + " " + towards + " a peer that is gone must fail, not "
                + (r != null ? "hang" : "would-block for ever"));
    }

    private void closeBounded(String what, BoundedCall.Call<Void> close) throws NetException {
        BoundedCall.call(what, kit.settings().completionTimeout(), "closing with requests in flight must be safe and "
                + "return (NetPlugin.closeSend/closeRecv)", close);
    }

    // ---------------------------------------------------------------------------------------------
    // fault.1

    public void closeWithRequestsInFlight() throws NetException {
        receiverClosesWithReceivesPending();
        senderClosesWithSendsPending();
    }

    private void receiverClosesWithReceivesPending() throws NetException {
        MemorySegment sendBuf = NetKit.allocate(MIB);
        MemorySegment recvBuf = NetKit.allocate(4 * MIB);
        MessagePattern.fill(sendBuf, kit.seed("fault.1", 0));
        Link link = kit.connect();
        try {
            MemoryHandle smh = link.registerSend(sendBuf);
            MemoryHandle rmh = link.registerRecv(recvBuf);
            Batch b = kit.batch();
            for (int i = 0; i < 4; i++) {
                MemorySegment slot = recvBuf.asSlice(i * MIB, MIB);
                b.add("receive " + i, () -> kit.irecv(link.recv(), slot, Exchange.TAG, rmh), new int[1]);
            }
            int send = b.add("send of 1 MiB", () -> kit.isend(link.send(), sendBuf, Exchange.TAG, smh), new int[1]);
            b.pass();
            closeBounded("closeRecv with 4 receives in flight", () -> {
                link.closeRecv();
                return null;
            });
            // The sender's request in flight must finish (either way); later sends must fail.
            Batch sender = kit.batch();
            if (b.state(send) == Batch.State.PENDING) {
                sender.addPosted("the send in flight when the receiver closed", b.requestOf(send), new int[1]);
                sender.runUntil(Deadline.after(kit.settings().peerDeathTimeout()));
                if (!sender.finished()) {
                    fail("the receiver closed its comm; " + sender.describeOpen() + " "
                            + Deadline.format(kit.settings().peerDeathTimeout()) + " later: the peer's pending requests "
                            + "must complete, with an error if need be (NetPlugin.closeRecv)");
                }
            }
            sendsMustFail(kit, link.send(), smh, sendBuf, "after the receiver closed its comm");
        } finally {
            TransferChecks.closeQuietly(link);
        }
    }

    private void senderClosesWithSendsPending() throws NetException {
        MemorySegment sendBuf = NetKit.allocate(MIB);
        MemorySegment recvBuf = NetKit.allocate(4 * MIB);
        MessagePattern.fill(sendBuf, kit.seed("fault.1", 1));
        Link link = kit.connect();
        try {
            MemoryHandle smh = link.registerSend(sendBuf);
            MemoryHandle rmh = link.registerRecv(recvBuf);
            Batch b = kit.batch();
            List<Integer> recvs = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                MemorySegment slot = recvBuf.asSlice(i * MIB, MIB);
                recvs.add(b.add("receive " + i, () -> kit.irecv(link.recv(), slot, Exchange.TAG, rmh), new int[1]));
            }
            b.add("send of 1 MiB", () -> kit.isend(link.send(), sendBuf, Exchange.TAG, smh), new int[1]);
            b.pass();
            closeBounded("closeSend with a send in flight", () -> {
                link.closeSend();
                return null;
            });
            Batch receiver = kit.batch();
            for (int i : recvs) {
                if (b.state(i) == Batch.State.PENDING) {
                    receiver.addPosted(b.what(i), b.requestOf(i), new int[1]);
                } else if (b.state(i) == Batch.State.UNPOSTED) {
                    MemorySegment slot = recvBuf.asSlice(i * MIB, MIB);
                    receiver.add(b.what(i), () -> kit.irecv(link.recv(), slot, Exchange.TAG, rmh), new int[1]);
                }
            }
            receiver.runUntil(Deadline.after(kit.settings().peerDeathTimeout()));
            if (!receiver.finished()) {
                fail("the sender closed its comm; " + receiver.describeOpen() + " "
                        + Deadline.format(kit.settings().peerDeathTimeout()) + " later: the peer's pending requests must "
                        + "fail (NetPlugin.closeSend)");
            }
            for (int i = 0; i < receiver.size(); i++) {
                boolean first = receiver.what(i).equals("receive 0");
                if (receiver.state(i) == Batch.State.DONE && !first) {
                    fail(receiver.what(i) + " completed (" + receiver.sizes(i)[0] + " bytes) although the sender sent one "
                            + "message and closed");
                }
                if (receiver.state(i) == Batch.State.DONE) {
                    String m = MessagePattern.describeMismatch(recvBuf.asSlice(0, MIB), kit.seed("fault.1", 1));
                    if (receiver.sizes(i)[0] != MIB || m != null) {
                        fail("receive 0 completed with " + receiver.sizes(i)[0] + " bytes " + (m == null ? "" : m)
                                + " after the sender closed mid-message: a partial message must fail, not complete");
                    }
                }
            }
        } finally {
            TransferChecks.closeQuietly(link);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // fault.2

    public void peerKilled(Optional<PeerTransport> peerTransport) throws Exception {
        assumeTrue(peerTransport.isPresent(), "needs a peer JVM: the kit class gives no PeerTransport");
        Duration startup = kit.settings().connectTimeout().multipliedBy(3);
        MemorySegment ourRecv = NetKit.allocate(4 * BIG);
        MemorySegment ourSend = NetKit.allocate(BIG);
        MessagePattern.fill(ourSend, kit.seed("fault.2", 0));
        RecvComm recv = null;
        SendComm send = null;
        try (PeerProcess peer = PeerProcess.start(peerTransport.get(), startup)) {
            // Peer -> us.
            NetKit.Listener l = kit.listen();
            try {
                peer.send("CONNECT " + HexFormat.of().formatHex(l.handle().toByteArray()));
                recv = acceptWhilePeerConnects(l, peer);
            } finally {
                kit.closeListen(l.comm());
            }
            peer.await("CONNECTED", kit.settings().connectTimeout());
            // Us -> peer.
            NetHandle theirs = NetHandle.fromBytes(HexFormat.of().parseHex(peer.request("LISTEN", "HANDLE",
                    kit.settings().connectTimeout())));
            send = connectWhilePeerAccepts(theirs, peer);
            peer.await("ACCEPTED", kit.settings().connectTimeout());

            MemoryHandle rmh = kit.plugin().regMr(recv, ourRecv, PointerType.HOST);
            MemoryHandle smh = kit.plugin().regMr(send, ourSend, PointerType.HOST);
            peer.request("SEND 1 " + BIG, "POSTED", kit.settings().completionTimeout());
            peer.request("RECV 2 " + BIG, "POSTED", kit.settings().completionTimeout());
            Batch b = kit.batch();
            for (int i = 0; i < 4; i++) {
                MemorySegment slot = ourRecv.asSlice(i * BIG, BIG);
                RecvComm rc = recv;
                b.add("receive " + i + (i == 0 ? " (matching the peer's one 32 MiB send)" : " (nothing will match it)"),
                        () -> kit.irecv(rc, slot, Exchange.TAG, rmh), new int[1]);
            }
            for (int i = 0; i < 2; i++) {
                SendComm sc = send;
                b.add("send " + i + " of 32 MiB", () -> kit.isend(sc, ourSend, Exchange.TAG, smh), new int[1]);
            }
            Deadline settle = Deadline.after(Duration.ofMillis(200));
            while (!settle.expired()) {
                b.pass();
            }
            for (int i = 1; i < 4; i++) {
                if (b.state(i) == Batch.State.DONE) {
                    fail(b.what(i) + " completed although the peer sent only one message");
                }
            }

            peer.kill();
            Deadline d = Deadline.after(kit.settings().peerDeathTimeout());
            b.runUntil(d);
            if (!b.finished()) {
                fail(Deadline.format(d.budget()) + " after the peer process was killed: " + b.describeOpen()
                        + ". Every pending request must complete, with an error, within a bounded time once the "
                        + "peer dies (NetPlugin: Errors)" + peer.stderrTail());
            }
            for (int i = 0; i < b.size(); i++) {
                if (b.state(i) == Batch.State.FAILED && !PEER_GONE.contains(b.error(i).result())) {
                    fail(b.what(i) + " failed with " + b.error(i) + "; a dead peer is ncclRemoteError (or "
                            + "ncclSystemError for a local network failure)");
                }
                if (i >= 1 && i < 4 && b.state(i) == Batch.State.DONE) {
                    fail(b.what(i) + " completed successfully after the peer was killed, with nothing sent for it");
                }
            }
            receivesMustFail(kit, recv, rmh, ourRecv.asSlice(0, MIB), "after the peer process was killed");
            sendsMustFail(kit, send, smh, ourSend.asSlice(0, MIB), "after the peer process was killed");
        } finally {
            closeQuietly(send, recv);
        }
    }

    private RecvComm acceptWhilePeerConnects(NetKit.Listener l, PeerProcess peer) throws NetException {
        Deadline d = Deadline.after(kit.settings().connectTimeout());
        Backoff idle = new Backoff();
        while (true) {
            RecvComm r = kit.plugin().accept(l.comm());
            if (r != null) {
                return r;
            }
            if (d.expired()) {
                fail("the peer JVM's connect was not accepted within " + Deadline.format(d.budget()) + peer.stderrTail());
            }
            idle.idle();
        }
    }

    private SendComm connectWhilePeerAccepts(NetHandle handle, PeerProcess peer) throws NetException {
        Deadline d = Deadline.after(kit.settings().connectTimeout());
        Backoff idle = new Backoff();
        while (true) {
            SendComm s = kit.plugin().connect(NetKit.DEV, handle);
            if (s != null) {
                return s;
            }
            if (d.expired()) {
                fail("connecting to the peer JVM did not complete within " + Deadline.format(d.budget())
                        + peer.stderrTail());
            }
            idle.idle();
        }
    }

    private void closeQuietly(SendComm send, RecvComm recv) {
        try {
            if (send != null) {
                kit.plugin().closeSend(send);
            }
        } catch (NetException | RuntimeException e) {
            // The peer is dead; closing only has to return.
        }
        try {
            if (recv != null) {
                kit.plugin().closeRecv(recv);
            }
        } catch (NetException | RuntimeException e) {
            // Likewise.
        }
    }

    // ---------------------------------------------------------------------------------------------
    // fault.3

    public void strayConnectionsDoNotWedgeTheListener() throws Exception {
        assumeTrue(ListeningSockets.supported(), "needs Linux's /proc to find the listening socket");
        Set<InetSocketAddress> before = ListeningSockets.ofThisProcess();
        NetKit.Listener l = kit.listen();
        List<SocketChannel> strays = new ArrayList<>();
        Link link = null;
        try {
            Set<InetSocketAddress> opened = ListeningSockets.ofThisProcess();
            opened.removeAll(before);
            assumeTrue(!opened.isEmpty(), "listen opened no TCP listening socket in this process; the rule aims raw "
                    + "TCP connections at one");
            SplittableRandom r = kit.random("fault.3");
            for (InetSocketAddress a : opened) {
                InetSocketAddress to = ListeningSockets.reachable(a);
                strays.add(SocketChannel.open(to));                              // silent, kept open
                strays.add(write(SocketChannel.open(to), garbage(r, 128)));       // garbage, kept open
                write(SocketChannel.open(to), garbage(r, 4096)).close();         // garbage, then gone
                SocketChannel.open(to).close();                                  // connects and leaves
                strays.add(write(SocketChannel.open(to), ones(NetHandle.SIZE)));  // all-ones "lengths"
            }
            // Long enough for the listener to read and drop every stray, several times over.
            Deadline quiet = Deadline.after(Duration.ofMillis((long) (300 * kit.settings().timeoutScale())));
            Backoff idle = new Backoff();
            while (!quiet.expired()) {
                RecvComm stray = acceptBounded(l, "with only stray connections pending");
                if (stray != null) {
                    fail("accept returned a comm for a stray connection (silent, garbage or closed): the listener must "
                            + "authenticate its peer (e.g. a secret in the handle) and drop the rest (spec 5.7)");
                }
                idle.idle();
            }
            // A genuine peer must still get through, with the strays still open.
            link = connectWithBoundedAccepts(l);
            Exchange ex = new Exchange(kit, "fault.3");
            ex.add(link, List.of(Message.exact(65_537)), 1).run();
        } finally {
            for (SocketChannel c : strays) {
                try {
                    c.close();
                } catch (IOException e) {
                    // Closing a stray only has to be attempted.
                }
            }
            if (link != null) {
                link.close();
            }
            kit.closeListen(l.comm());
        }
    }

    private RecvComm acceptBounded(NetKit.Listener l, String when) throws NetException {
        try {
            return BoundedCall.call("accept " + when, kit.settings().callBound(), "accept must not block on a stray "
                    + "connection (spec 5.7)", () -> kit.plugin().accept(l.comm()));
        } catch (NetException e) {
            throw new AssertionError("accept " + when + " threw " + e + ": a stray connection must be dropped (and "
                    + "logged), not fail the listener", e);
        }
    }

    private Link connectWithBoundedAccepts(NetKit.Listener l) throws Exception {
        AtomicReference<SendComm> sent = new AtomicReference<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread connector = new Thread(() -> {
            Backoff idle = new Backoff();
            try {
                while (!Thread.currentThread().isInterrupted() && sent.get() == null) {
                    sent.set(kit.plugin().connect(NetKit.DEV, l.handle()));
                    idle.idle();
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }, "jccl-tck-genuine-connect");
        connector.setDaemon(true);
        connector.start();
        Deadline d = Deadline.after(kit.settings().connectTimeout());
        Backoff idle = new Backoff();
        RecvComm recv = null;
        try {
            while (recv == null || sent.get() == null) {
                if (failure.get() != null) {
                    throw new AssertionError("the genuine connect threw " + failure.get(), failure.get());
                }
                if (recv == null) {
                    recv = acceptBounded(l, "with stray connections open and a genuine one arriving");
                }
                if (d.expired()) {
                    fail("with stray connections open, a genuine connection did not complete within "
                            + Deadline.format(d.budget()) + " (accept " + (recv == null ? "still null" : "done")
                            + "): the strays wedged the listener");
                }
                idle.idle();
            }
        } finally {
            connector.interrupt();
        }
        return new Link(kit, sent.get(), recv);
    }

    private static ByteBuffer garbage(SplittableRandom r, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) r.nextInt();
        }
        return ByteBuffer.wrap(b);
    }

    private static ByteBuffer ones(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) 0xFF);
        return ByteBuffer.wrap(b);
    }

    private static SocketChannel write(SocketChannel c, ByteBuffer data) throws IOException {
        while (data.hasRemaining()) {
            c.write(data);
        }
        return c;
    }

    // ---------------------------------------------------------------------------------------------
    // fault.4

    public void deregOfUnknownHandleIsAnError() throws NetException {
        MemorySegment buf = NetKit.allocate(4096);
        NetProperties p = kit.properties();
        try (Link link = kit.connect()) {
            MemoryHandle foreign = new MemoryHandle() {
                @Override
                public String toString() {
                    return "a MemoryHandle made by the kit";
                }
            };
            mustRefuse("deregMr of a handle this transport never issued", () -> kit.plugin().deregMr(link.send(), foreign));
            MemoryHandle h = kit.plugin().regMr(link.send(), buf, PointerType.HOST);
            kit.plugin().deregMr(link.send(), h);
            mustRefuse("deregMr of a handle already released", () -> kit.plugin().deregMr(link.send(), h));
            if (!p.regIsGlobal()) {
                MemoryHandle onRecv = kit.plugin().regMr(link.recv(), buf, PointerType.HOST);
                mustRefuse("deregMr on the send comm of a handle registered on the receive comm",
                        () -> kit.plugin().deregMr(link.send(), onRecv));
                kit.plugin().deregMr(link.recv(), onRecv);
            }
            new Exchange(kit, "fault.4").add(link, List.of(Message.exact(4096), Message.exact(1)), 1).run();
        }
    }

    private interface Call {
        void run() throws NetException;
    }

    private static void mustRefuse(String what, Call call) {
        try {
            call.run();
        } catch (NetException e) {
            if (e.result() != NetResult.INVALID_ARGUMENT && e.result() != NetResult.INTERNAL_ERROR) {
                fail(what + " failed with " + e + "; a handle the comm did not issue is ncclInvalidArgument (or "
                        + "ncclInternalError)");
            }
            return;
        } catch (RuntimeException e) {
            fail(what + " threw " + e + " instead of a NetException; through the native shim (a C plugin freeing an "
                    + "unknown pointer) this is a crash");
        }
        fail(what + " succeeded: it must fail with ncclInvalidArgument");
    }

    // ---------------------------------------------------------------------------------------------
    // fault.5, fault.6 (optional)

    public void tooManyGroupedBuffersRefused() throws NetException {
        int n = kit.properties().maxRecvs() + 1;
        MemorySegment buf = NetKit.allocate(n * 64L);
        try (Link link = kit.connect()) {
            MemoryHandle mh = link.registerRecv(buf);
            MemorySegment[] data = new MemorySegment[n];
            int[] tags = new int[n];
            MemoryHandle[] mhs = new MemoryHandle[n];
            for (int i = 0; i < n; i++) {
                data[i] = buf.asSlice(i * 64L, 64);
                tags[i] = i;
                mhs[i] = mh;
            }
            try {
                NetRequest r = kit.irecv(link.recv(), n, data, tags, mhs);
                fail("irecv with n = " + n + " > maxRecvs returned " + (r == null ? "null (would block)" : "a request")
                        + " instead of failing with ncclInternalError");
            } catch (NetException e) {
                if (e.result() != NetResult.INTERNAL_ERROR) {
                    fail("irecv with n = maxRecvs + 1 failed with " + e + "; the SPI says ncclInternalError");
                }
            } catch (RuntimeException e) {
                fail("irecv with n = maxRecvs + 1 threw " + e + " instead of a NetException");
            }
        }
    }

    public void closedPeerIsRemoteError() throws NetException {
        MemorySegment buf = NetKit.allocate(2 * 4096);
        Link link = kit.connect();
        try {
            MemoryHandle mh = link.registerRecv(buf);
            Batch b = kit.batch();
            b.add("receive 0", () -> kit.irecv(link.recv(), buf.asSlice(0, 4096), Exchange.TAG, mh), new int[1]);
            b.add("receive 1", () -> kit.irecv(link.recv(), buf.asSlice(4096, 4096), Exchange.TAG, mh), new int[1]);
            b.pass();
            link.closeSend();
            b.runUntil(Deadline.after(kit.settings().peerDeathTimeout()));
            for (int i = 0; i < b.size(); i++) {
                if (b.state(i) != Batch.State.FAILED) {
                    fail(b.what(i) + " is " + b.state(i) + " after the sender closed; it must fail");
                }
                if (b.error(i).result() != NetResult.REMOTE_ERROR) {
                    fail(b.what(i) + " failed with " + b.error(i) + " after the sender closed; a peer that closed is "
                            + "ncclRemoteError, so that NCCL reports a remote failure, not an internal one");
                }
            }
        } finally {
            TransferChecks.closeQuietly(link);
        }
    }
}
