package io.jccl.tck.internal.net;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.BoundedCall;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.MessagePattern;
import io.jccl.tck.internal.Threads;
import io.jccl.tck.internal.net.Exchange.Message;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.fail;

/** The connection rules ({@code conn.*}). */
public final class ConnectionChecks {
    private static final int MANY = 8;
    private static final int THREADS = 4;
    private static final long PROBE = 65_537;

    private final NetKit kit;

    public ConnectionChecks(NetKit kit) {
        this.kit = kit;
    }

    /** One message each way the rules use to prove a connection carries data. */
    private void probe(String rule, List<Link> links) throws NetException {
        Exchange ex = new Exchange(kit, rule);
        for (Link l : links) {
            ex.add(l, List.of(Message.exact(PROBE), Message.exact(0), Message.exact(17)), 1);
        }
        ex.run();
    }

    private static void closeAll(List<Link> links) throws NetException {
        NetException first = null;
        for (Link l : links) {
            try {
                l.close();
            } catch (NetException e) {
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
    }

    public void listenDoesNotBlock() throws NetException {
        NetKit.Listener a = kit.listen();
        NetKit.Listener b = kit.listen();
        try {
            if (a.handle().equals(NetHandle.allocate())) {
                fail("listen left the handle all zeros: it must write what a peer needs to connect");
            }
            assertNotEquals(a.handle(), b.handle(), "two listen comms wrote the same handle: a peer could not tell "
                    + "them apart");
        } finally {
            kit.closeListen(a.comm());
            kit.closeListen(b.comm());
        }
    }

    /**
     * One thread, as NCCL's proxy service thread may (a loopback connection): connect and accept
     * called in turn, each bounded, until both return a comm.
     */
    public void connectAndAcceptDoNotBlock() throws NetException {
        NetKit.Listener l = kit.listen();
        SendComm send = null;
        RecvComm recv = null;
        try {
            Deadline deadline = Deadline.after(kit.settings().connectTimeout());
            Backoff idle = new Backoff();
            int calls = 0;
            while (send == null || recv == null) {
                if (send == null) {
                    send = BoundedCall.call("connect (call " + (++calls) + ", with the peer's accept not called yet)",
                            kit.settings().callBound(), "connect must not block (spec 5.6): return null and let "
                                    + "NCCL call again", () -> kit.plugin().connect(NetKit.DEV, l.handle()));
                }
                if (recv == null) {
                    recv = BoundedCall.call("accept (call " + (++calls) + ")", kit.settings().callBound(),
                            "accept must not block (spec 5.7): return null and let NCCL call again",
                            () -> kit.plugin().accept(l.comm()));
                }
                if (send != null && recv != null) {
                    break;
                }
                if (deadline.expired()) {
                    fail("connect and accept, called in turn on one thread, did not both return a comm within "
                            + Deadline.format(deadline.budget()) + " (" + calls + " calls; connect "
                            + (send == null ? "still null" : "done") + ", accept " + (recv == null ? "still null" : "done")
                            + "): each side must make progress on its own calls");
                }
                idle.idle();
            }
        } finally {
            kit.closeListen(l.comm());
        }
        try (Link link = new Link(kit, send, recv)) {
            probe("conn.2", List.of(link));
        }
    }

    public void oneListenCommServesMany() throws NetException {
        NetKit.Listener l = kit.listen();
        List<Link> links = new ArrayList<>();
        try {
            for (int i = 0; i < MANY; i++) {
                links.add(kit.connect(l.comm(), l.handle()));
            }
            probe("conn.3", links);
        } finally {
            try {
                closeAll(links);
            } finally {
                kit.closeListen(l.comm());
            }
        }
    }

    public void concurrentSetups() throws Exception {
        List<Link> links = Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(THREADS);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Thread th = new Thread(() -> {
                try {
                    start.await(kit.settings().connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
                    links.add(kit.connect());
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "jccl-tck-setup-" + t);
            th.setDaemon(true);
            threads.add(th);
            th.start();
        }
        try {
            joinAll(threads, failure);
            probe("conn.4", links);
        } finally {
            closeAll(links);
        }
    }

    private void joinAll(List<Thread> threads, AtomicReference<Throwable> failure) throws Exception {
        Deadline d = Deadline.after(kit.settings().connectTimeout().multipliedBy(2));
        for (Thread t : threads) {
            t.join(Math.max(1, d.remaining().toMillis()));
            if (t.isAlive()) {
                fail("a connection set up from " + threads.size() + " threads at once did not complete within "
                        + Deadline.format(d.budget()) + ":\n" + Threads.stackOf(t));
            }
        }
        Throwable f = failure.get();
        if (f instanceof Exception e) {
            throw e;
        }
        if (f instanceof Error e) {
            throw e;
        }
    }

    /**
     * Several threads connect to one listen comm at once (each with its own copy of the handle, as
     * separate NCCL processes would); this thread accepts them all. Which accepted comm belongs to
     * which sender is unknown, so each sender's message must arrive on exactly one of them.
     */
    public void concurrentConnectsToOneListener() throws Exception {
        NetKit.Listener l = kit.listen();
        List<SendComm> sends = Collections.synchronizedList(new ArrayList<>());
        List<RecvComm> recvs = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        try {
            for (int t = 0; t < THREADS; t++) {
                NetHandle own = l.handle().copy();
                Thread th = new Thread(() -> {
                    Backoff idle = new Backoff();
                    try {
                        while (!Thread.currentThread().isInterrupted()) {
                            SendComm s = kit.plugin().connect(NetKit.DEV, own);
                            if (s != null) {
                                sends.add(s);
                                return;
                            }
                            idle.idle();
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }, "jccl-tck-connect-" + t);
                th.setDaemon(true);
                threads.add(th);
                th.start();
            }
            Deadline d = Deadline.after(kit.settings().connectTimeout());
            Backoff idle = new Backoff();
            while (recvs.size() < THREADS && failure.get() == null) {
                RecvComm r = kit.plugin().accept(l.comm());
                if (r != null) {
                    recvs.add(r);
                    continue;
                }
                if (d.expired()) {
                    fail(THREADS + " threads connected to one listen comm at once; accept returned only " + recvs.size()
                            + " comm(s) within " + Deadline.format(d.budget()));
                }
                idle.idle();
            }
            joinAll(threads, failure);
            matchSendersToReceivers(sends, recvs);
        } finally {
            for (Thread t : threads) {
                t.interrupt();
            }
            for (SendComm s : sends) {
                kit.plugin().closeSend(s);
            }
            for (RecvComm r : recvs) {
                kit.plugin().closeRecv(r);
            }
            kit.closeListen(l.comm());
        }
    }

    private void matchSendersToReceivers(List<SendComm> sends, List<RecvComm> recvs) throws NetException {
        int n = sends.size();
        MemorySegment sendBuf = NetKit.allocate(n * PROBE);
        MemorySegment recvBuf = NetKit.allocate(n * PROBE);
        long[] seeds = new long[n];
        MemoryHandle[] smh = new MemoryHandle[n];
        MemoryHandle[] rmh = new MemoryHandle[n];
        NetRequest[] sreq = new NetRequest[n];
        NetRequest[] rreq = new NetRequest[n];
        boolean[] sdone = new boolean[n];
        boolean[] rdone = new boolean[n];
        int[] sizes = new int[1];
        for (int i = 0; i < n; i++) {
            seeds[i] = kit.seed("conn.5", i);
            MemoryHandle h = kit.plugin().regMr(sends.get(i), sendBuf.asSlice(i * PROBE, PROBE), PointerType.HOST);
            smh[i] = h;
            rmh[i] = kit.plugin().regMr(recvs.get(i), recvBuf.asSlice(i * PROBE, PROBE), PointerType.HOST);
            MessagePattern.fill(sendBuf.asSlice(i * PROBE, PROBE), seeds[i]);
        }
        Deadline d = Deadline.after(kit.settings().completionTimeout());
        Backoff idle = new Backoff();
        int remaining = 2 * n;
        while (remaining > 0) {
            boolean progress = false;
            for (int i = 0; i < n; i++) {
                if (rreq[i] == null) {
                    rreq[i] = kit.irecv(recvs.get(i), recvBuf.asSlice(i * PROBE, PROBE), Exchange.TAG, rmh[i]);
                    progress |= rreq[i] != null;
                }
                if (sreq[i] == null) {
                    sreq[i] = kit.isend(sends.get(i), sendBuf.asSlice(i * PROBE, PROBE), Exchange.TAG, smh[i]);
                    progress |= sreq[i] != null;
                }
                if (rreq[i] != null && !rdone[i] && kit.test(rreq[i], sizes)) {
                    rdone[i] = true;
                    remaining--;
                    progress = true;
                }
                if (sreq[i] != null && !sdone[i] && kit.test(sreq[i], sizes)) {
                    sdone[i] = true;
                    remaining--;
                    progress = true;
                }
            }
            if (!progress && d.expired()) {
                fail("messages over " + n + " connections accepted from one listen comm did not complete within "
                        + Deadline.format(d.budget()));
            }
            idle.after(progress);
        }
        boolean[] matched = new boolean[n];
        for (int i = 0; i < n; i++) {
            MemorySegment got = recvBuf.asSlice(i * PROBE, PROBE);
            int from = -1;
            for (int s = 0; s < n; s++) {
                if (MessagePattern.firstMismatch(got, seeds[s]) < 0) {
                    from = s;
                }
            }
            if (from < 0) {
                fail("accepted comm " + i + " received bytes that no sender sent: connections were mixed up");
            }
            if (matched[from]) {
                fail("two accepted comms received the message of sender " + from + ": one connection was accepted twice");
            }
            matched[from] = true;
        }
        for (int i = 0; i < n; i++) {
            kit.plugin().deregMr(sends.get(i), smh[i]);
            kit.plugin().deregMr(recvs.get(i), rmh[i]);
        }
    }

    public void copiedHandleConnects() throws NetException {
        NetKit.Listener l = kit.listen();
        NetHandle copy = NetHandle.fromBytes(l.handle().toByteArray());
        Link link;
        try {
            link = kit.connect(l.comm(), copy);
        } finally {
            kit.closeListen(l.comm());
        }
        try (link) {
            probe("conn.6", List.of(link));
        }
    }

    public void acceptedConnectionsOutliveTheListenComm() throws NetException {
        NetKit.Listener l = kit.listen();
        Link link;
        try {
            link = kit.connect(l.comm(), l.handle());
        } finally {
            kit.closeListen(l.comm());
        }
        try (link) {
            probe("conn.7", List.of(link));
        }
    }

    /**
     * connect to a handle whose listener is gone must fail: at connect (preferred), or, for a
     * transport that connects lazily, at the first send; never by returning null for ever.
     */
    public void connectToClosedListenerFails() throws NetException {
        NetKit.Listener l = kit.listen();
        kit.closeListen(l.comm());
        failsToConnect(l.handle(), "a listen comm that was closed before connect");
    }

    public void garbageHandleIsRefused() throws NetException {
        failsToConnect(NetHandle.allocate(), "an all-zero handle (no listen wrote it)");
    }

    private void failsToConnect(NetHandle handle, String what) throws NetException {
        Deadline d = Deadline.after(kit.settings().connectTimeout());
        Backoff idle = new Backoff();
        SendComm s = null;
        while (s == null) {
            try {
                // Bounded by the whole connect timeout, not the call bound: conn.2 is the rule about blocking.
                s = BoundedCall.call("connect to " + what, kit.settings().connectTimeout(), "connect must not hang",
                        () -> kit.plugin().connect(NetKit.DEV, handle));
            } catch (NetException e) {
                return;
            } catch (RuntimeException e) {
                fail("connect to " + what + " threw " + e + " instead of a NetException; through the native shim an "
                        + "unchecked exception is a crash");
            }
            if (s == null && d.expired()) {
                fail("connect to " + what + " still returned null after " + Deadline.format(d.budget())
                        + ": it must fail with a NetException (NCCL would call it for ever)");
            }
            idle.idle();
        }
        // A lazy transport returned a comm: its first send must then fail, within the peer-death bound.
        MemorySegment one = NetKit.allocate(1);
        try {
            MemoryHandle mh = kit.plugin().regMr(s, one, PointerType.HOST);
            FaultChecks.sendsMustFail(kit, s, mh, one, "after connecting to " + what);
        } catch (NetException e) {
            // Failing at registration is failing too.
        } finally {
            try {
                kit.plugin().closeSend(s);
            } catch (NetException e) {
                // The comm is broken by design here.
            }
        }
    }
}
