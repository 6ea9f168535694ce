package io.jccl.core.bootstrap;

import io.jccl.core.JcclException;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetResult;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * One rank's bootstrap: its listener and serving thread, its links to other ranks, a mailbox of
 * tagged messages, and the watch over its ring neighbours.
 *
 * <p>Failure detection: a peer whose bootstrap connection ends without a goodbye has died (its
 * process exited, so the kernel closed its sockets); a ring neighbour silent for the peer timeout
 * is frozen or unreachable (heartbeats go every quarter of it). The rank that notices tells every
 * other rank with an abort notice naming the peer, so that all of them fail within the bound, not
 * only the neighbours.
 *
 * <p>Every wait is bounded: a message that does not come within the communicator's timeout fails
 * with {@link NetResult#TIMEOUT} naming the rank it was expected from.
 */
public final class Bootstrap implements AutoCloseable {

    /** Told about a failure of the communicator that the bootstrap saw first. */
    @FunctionalInterface
    public interface FailureListener {
        void failed(JcclException cause);
    }

    private final int rank;
    private final int nranks;
    private final byte[] secret;
    private final long timeoutNanos;
    private final long peerTimeoutNanos;
    private final NetLogger log;
    private final FailureListener listener;
    private final BootstrapServer server;
    private final PeerInfo[] peers;
    private final PeerLink[] links;
    private final Object[] linkLocks;
    private final Map<Long, ArrayDeque<byte[]>> mailbox = new HashMap<>();
    /** {@link Wire#RECOVERY} messages by sender: they outlive a failure of the communicator. */
    private final Map<Integer, ArrayDeque<byte[]>> recovery = new HashMap<>();
    private final String[] gone;
    private final boolean[] left;
    private final long[] lastHeard;
    private final AtomicBoolean abortNoticeSent = new AtomicBoolean();
    private volatile Thread noticeThread;
    private volatile LongSupplier status = () -> -1;
    private volatile JcclException failure;
    private volatile boolean monitoring;
    private volatile boolean closing;
    private long nextHeartbeat;

    private Bootstrap(int rank, int nranks, byte[] secret, Duration timeout, Duration peerTimeout, NetLogger log,
                      FailureListener listener, InetAddress listenOn) throws IOException {
        this.rank = rank;
        this.nranks = nranks;
        this.secret = secret;
        this.timeoutNanos = timeout.toNanos();
        this.peerTimeoutNanos = peerTimeout.toNanos();
        this.log = log;
        this.listener = listener;
        this.peers = new PeerInfo[nranks];
        this.links = new PeerLink[nranks];
        this.linkLocks = new Object[nranks];
        for (int i = 0; i < nranks; i++) {
            linkLocks[i] = new Object();
        }
        this.gone = new String[nranks];
        this.left = new boolean[nranks];
        this.lastHeard = new long[nranks];
        this.server = new BootstrapServer(new InetSocketAddress(listenOn, 0), secret, new Handler(),
                "jccl-bootstrap-r" + rank, Math.max(TimeUnit.MILLISECONDS.toNanos(20), peerTimeoutNanos / 4));
    }

    /**
     * Joins the communicator: announces this rank to the root, learns its ring successor, and
     * all-gathers every rank's {@link PeerInfo}. Blocks, for at most {@code timeout}.
     *
     * @param root       the root's address
     * @param secret     the communicator's secret
     * @param attributes this rank's engine fields, for {@link PeerInfo#attributes()}
     * @throws JcclException {@link NetResult#TIMEOUT} if the root or a peer does not answer in time,
     *                       {@link NetResult#SYSTEM_ERROR} if the network fails,
     *                       {@link NetResult#INVALID_USAGE} if the root refuses this rank
     */
    public static Bootstrap join(InetSocketAddress root, byte[] secret, int rank, int nranks, String host,
                                 byte[] attributes, Duration timeout, Duration peerTimeout, NetLogger log,
                                 FailureListener listener) {
        Bootstrap b;
        try {
            b = new Bootstrap(rank, nranks, secret, timeout, peerTimeout, log, listener,
                    BootstrapInterfaces.localAddress());
        } catch (IOException | IllegalStateException | IllegalArgumentException e) {
            throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK,
                    "rank " + rank + ": cannot start the bootstrap listener: " + e.getMessage(), e);
        }
        try {
            b.joinRing(root, host, attributes);
            return b;
        } catch (RuntimeException e) {
            b.close(false);
            throw e;
        }
    }

    private void joinRing(InetSocketAddress root, String host, byte[] attributes) {
        long deadline = System.nanoTime() + timeoutNanos;
        InetSocketAddress mine;
        try {
            mine = server.address();
        } catch (IOException e) {
            throw new JcclException(NetResult.SYSTEM_ERROR, "rank " + rank + ": " + e.getMessage());
        }
        peers[rank] = new PeerInfo(rank, host, ProcessHandle.current().pid(), mine, attributes);
        log.info(LogSubsystem.BOOTSTRAP, "Bootstrap: rank %d of %d listening on %s, root %s", rank, nranks, mine, root);
        InetSocketAddress next = announce(root, mine, deadline);
        if (nranks == 1) {
            return;
        }
        int nextRank = (rank + 1) % nranks;
        synchronized (linkLocks[nextRank]) {
            links[nextRank] = openLink(next, nextRank, deadline);
        }
        byte[][] all = allGather(peers[rank].encode());
        for (int r = 0; r < nranks; r++) {
            try {
                PeerInfo p = PeerInfo.decode(all[r]);
                if (p.rank() != r) {
                    throw new IOException("rank " + r + "'s entry claims rank " + p.rank());
                }
                peers[r] = p;
            } catch (IOException e) {
                throw new JcclException(NetResult.INTERNAL_ERROR, r, "malformed peer info from rank " + r + ": "
                        + e.getMessage(), e);
            }
        }
        // Both ring neighbours get heartbeats; open the link backwards now, not on the serving thread.
        int prevRank = (rank - 1 + nranks) % nranks;
        link(prevRank, deadline);
    }

    /** Tells the root who we are; returns the successor's address. */
    private InetSocketAddress announce(InetSocketAddress root, InetSocketAddress mine, long deadline) {
        long backoffMs = 10;
        PeerLink opened;
        while (true) {
            try {
                opened = PeerLink.open(root, secret, SecretHandshake.ROLE_ROOT_CLIENT, rank, -1,
                        remainingMs(deadline, 10_000));
                break;
            } catch (ConnectException | NoRouteToHostException | SocketTimeoutException e) {
                if (System.nanoTime() - deadline > 0) {
                    throw new JcclException(NetResult.TIMEOUT, JcclException.NO_RANK, "rank " + rank
                            + ": cannot reach the bootstrap root at " + root + " within "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: " + e.getMessage(), e);
                }
                sleepMs(backoffMs);
                backoffMs = Math.min(500, backoffMs * 2);
            } catch (IOException e) {
                throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "rank " + rank
                        + ": bootstrap root at " + root + ": " + e.getMessage(), e);
            }
        }
        try (PeerLink rootLink = opened) {
            rootLink.send(rank, Wire.HELLO, ByteBuffer.allocate(64).putInt(nranks).put(Wire.address(mine)).flip()
                    .array());
            PeerLink.Reply reply = rootLink.receive(remainingMs(deadline, Integer.MAX_VALUE));
            if (reply.tag() == Wire.ROOT_ERROR) {
                ByteBuffer b = ByteBuffer.wrap(reply.payload());
                NetResult result = NetResult.fromCode(b.getInt());
                throw new JcclException(result, "rank " + rank + ": "
                        + new String(b.array(), 4, b.remaining(), StandardCharsets.UTF_8));
            }
            if (reply.tag() != Wire.NEXT) {
                throw new IOException("unexpected reply " + reply.tag() + " from the bootstrap root");
            }
            return Wire.address(ByteBuffer.wrap(reply.payload()));
        } catch (SocketTimeoutException e) {
            throw new JcclException(NetResult.TIMEOUT, JcclException.NO_RANK, "rank " + rank + ": not every rank of "
                    + nranks + " joined within " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                    + " ms (the bootstrap root at " + root + " is still waiting)", e);
        } catch (IOException e) {
            throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "rank " + rank
                    + ": bootstrap root at " + root + ": " + e.getMessage(), e);
        }
    }

    private PeerLink openLink(InetSocketAddress address, int peer, long deadline) {
        try {
            return PeerLink.open(address, secret, SecretHandshake.ROLE_PEER, rank, peer, remainingMs(deadline, 10_000));
        } catch (IOException e) {
            JcclException failed = new JcclException(NetResult.REMOTE_ERROR, peer, "rank " + rank
                    + " cannot open a bootstrap link to " + describe(peer) + " at " + address + ": " + e.getMessage(), e);
            peerGone(peer, failed.getMessage());
            throw failed;
        }
    }

    /** @return this rank */
    public int rank() {
        return rank;
    }

    /** @return the number of ranks */
    public int nranks() {
        return nranks;
    }

    /** @return what init learnt about {@code r} */
    public PeerInfo peer(int r) {
        return peers[r];
    }

    /** @return e.g. {@code rank 3 (node7 pid 4242)}, or {@code rank 3} before its info is known */
    public String describe(int r) {
        PeerInfo p = r >= 0 && r < nranks ? peers[r] : null;
        return p == null ? "rank " + r : p.describe();
    }

    /**
     * Sends a message to a peer (non-blocking apart from opening the link). The peer picks it up
     * with {@link #receive} with the same tag; messages with one tag from one sender arrive in order.
     *
     * @param tag a tag of the caller's, from {@value Wire#FIRST_USER_TAG} up
     */
    public void send(int peer, int tag, byte[] payload) {
        if (tag < Wire.FIRST_USER_TAG) {
            throw new IllegalArgumentException("bootstrap tags below " + Wire.FIRST_USER_TAG + " are reserved");
        }
        sendFrame(peer, tag, payload, System.nanoTime() + timeoutNanos);
    }

    private void sendFrame(int peer, int tag, byte[] payload, long deadline) {
        checkNotFailed();
        PeerLink l = link(peer, deadline);
        try {
            l.send(rank, tag, payload);
        } catch (IOException e) {
            String why = describe(peer) + ": bootstrap link broke: " + e.getMessage();
            peerGone(peer, why);
            throw new JcclException(NetResult.REMOTE_ERROR, peer, why, e);
        }
    }

    private PeerLink link(int peer, long deadline) {
        synchronized (linkLocks[peer]) {
            if (links[peer] == null) {
                if (gone[peer] != null) {
                    throw new JcclException(NetResult.REMOTE_ERROR, peer, gone[peer]);
                }
                links[peer] = openLink(peers[peer].bootstrap(), peer, deadline);
            }
            return links[peer];
        }
    }

    /**
     * Waits for a message from a peer. Bounded: fails when the peer is known dead, when the
     * communicator has failed, or after the timeout.
     */
    public byte[] receive(int peer, int tag) {
        return take(peer, tag, System.nanoTime() + timeoutNanos);
    }

    private byte[] take(int peer, int tag, long deadline) {
        long key = ((long) peer << 32) | (tag & 0xffffffffL);
        synchronized (mailbox) {
            while (true) {
                ArrayDeque<byte[]> q = mailbox.get(key);
                if (q != null && !q.isEmpty()) {
                    return q.poll();
                }
                checkNotFailed();
                if (gone[peer] != null) {
                    throw new JcclException(NetResult.REMOTE_ERROR, peer, gone[peer]);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new JcclException(NetResult.TIMEOUT, peer, "rank " + rank + " waited "
                            + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms for " + describe(peer)
                            + " (bootstrap message " + tag + "): is it alive and in the same call?", null);
                }
                try {
                    mailbox.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "interrupted", e);
                }
            }
        }
    }

    /**
     * Sends a recovery message (survivors agreeing on a smaller communicator): unlike
     * {@link #send}, it goes even after the communicator failed; only a peer known dead refuses it.
     */
    public void sendRecovery(int peer, byte[] payload) {
        PeerLink l = link(peer, System.nanoTime() + timeoutNanos);
        try {
            l.send(rank, Wire.RECOVERY, payload);
        } catch (IOException e) {
            String why = describe(peer) + ": bootstrap link broke: " + e.getMessage();
            peerGone(peer, why);
            throw new JcclException(NetResult.REMOTE_ERROR, peer, why, e);
        }
    }

    /**
     * Waits for a recovery message from {@code peer}, also after a failure. Bounded: fails when
     * the peer is known dead or after {@code timeout}.
     */
    public byte[] receiveRecovery(int peer, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (mailbox) {
            while (true) {
                ArrayDeque<byte[]> q = recovery.get(peer);
                if (q != null && !q.isEmpty()) {
                    return q.poll();
                }
                if (gone[peer] != null) {
                    throw new JcclException(NetResult.REMOTE_ERROR, peer, gone[peer]);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new JcclException(NetResult.TIMEOUT, peer, "rank " + rank + " waited " + timeout.toMillis()
                            + " ms for " + describe(peer) + " to agree on the survivors: is it alive and shrinking "
                            + "too?", null);
                }
                try {
                    mailbox.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "interrupted", e);
                }
            }
        }
    }

    /** @return whether this bootstrap has seen {@code peer} die or freeze */
    public boolean isGone(int peer) {
        synchronized (mailbox) {
            return gone[peer] != null;
        }
    }

    /**
     * NCCL's ring all-gather over the bootstrap: {@code nranks - 1} steps, each passing one entry on.
     *
     * @return every rank's bytes, by rank
     */
    public byte[][] allGather(byte[] mine) {
        byte[][] all = new byte[nranks][];
        all[rank] = mine;
        int next = (rank + 1) % nranks;
        int prev = (rank - 1 + nranks) % nranks;
        long deadline = System.nanoTime() + timeoutNanos;
        for (int step = 0; step < nranks - 1; step++) {
            int sendIndex = (rank - step + nranks) % nranks;
            byte[] entry = all[sendIndex];
            sendFrame(next, Wire.ALLGATHER, ByteBuffer.allocate(4 + entry.length).putInt(sendIndex).put(entry).array(),
                    deadline);
            int recvIndex = (rank - step - 1 + nranks) % nranks;
            ByteBuffer in = ByteBuffer.wrap(take(prev, Wire.ALLGATHER, deadline));
            int index = in.getInt();
            if (index != recvIndex) {
                throw new JcclException(NetResult.INTERNAL_ERROR, prev, "bootstrap all-gather out of step: got rank "
                        + index + "'s entry, expected rank " + recvIndex + "'s");
            }
            byte[] e = new byte[in.remaining()];
            in.get(e);
            all[recvIndex] = e;
        }
        return all;
    }

    /** Returns once every rank has called it (an all-gather of nothing). */
    public void barrier() {
        allGather(new byte[0]);
    }

    /** @param issuedOperations what this rank answers when a peer asks how far it is (operations issued) */
    public void setStatusSource(LongSupplier issuedOperations) {
        this.status = issuedOperations;
    }

    /**
     * Asks every other rank how many operations it has issued, to tell which rank a stuck
     * operation waits for. Bounded by {@code timeoutMs}.
     *
     * @return per rank, its answer, or -1 where none came (this rank's own entry is -1 too)
     */
    public long[] queryStatus(long timeoutMs) {
        long[] answers = new long[nranks];
        java.util.Arrays.fill(answers, -1);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int r = 0; r < nranks; r++) {
            if (r != rank && gone[r] == null) {
                try {
                    PeerLink l = link(r, deadline);
                    l.send(rank, Wire.STATUS_QUERY, new byte[0]);
                } catch (IOException | JcclException e) {
                    // No answer from this one; the others may still tell.
                }
            }
        }
        for (int r = 0; r < nranks; r++) {
            if (r == rank) {
                continue;
            }
            long key = ((long) r << 32) | Wire.STATUS_REPLY;
            synchronized (mailbox) {
                while (true) {
                    ArrayDeque<byte[]> q = mailbox.get(key);
                    if (q != null && !q.isEmpty()) {
                        answers[r] = ByteBuffer.wrap(q.poll()).getLong();
                        break;
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0 || gone[r] != null) {
                        break;
                    }
                    try {
                        mailbox.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return answers;
                    }
                }
            }
        }
        return answers;
    }

    /** From now on, a neighbour silent for the peer timeout, or any peer vanishing, fails the communicator. */
    public void startMonitoring() {
        long now = System.nanoTime();
        synchronized (mailbox) {
            for (int r = 0; r < nranks; r++) {
                lastHeard[r] = now;
            }
        }
        nextHeartbeat = now;
        monitoring = true;
    }

    /** The communicator is closing on purpose: peers that leave now are no failure. */
    public void beginClose() {
        closing = true;
    }

    /**
     * Records a failure the engine saw first, wakes every bootstrap wait, and tells every other
     * rank (once, in the background) so that their pending operations fail too.
     *
     * @param cause      the failure; its {@link JcclException#failedRank()} is not told
     */
    public void fail(JcclException cause) {
        boolean first;
        synchronized (mailbox) {
            first = failure == null;
            if (first) {
                failure = cause;
            }
            mailbox.notifyAll();
        }
        if (first) {
            sendAbortNotices(cause.failedRank(), cause.getMessage());
        }
    }

    private void checkNotFailed() {
        JcclException f = failure;
        if (f != null) {
            throw new JcclException(f.result(), f.failedRank(), f.getMessage(), f);
        }
    }

    private void sendAbortNotices(int failedRank, String reason) {
        if (nranks == 1 || !abortNoticeSent.compareAndSet(false, true)) {
            return;
        }
        byte[] notice = Wire.abort(failedRank, reason);
        Thread t = new Thread(() -> {
            for (int r = 0; r < nranks; r++) {
                if (r == rank || r == failedRank || gone[r] != null || peers[r] == null) {
                    continue;
                }
                try {
                    PeerLink l;
                    synchronized (linkLocks[r]) {
                        if (links[r] == null) {
                            links[r] = PeerLink.open(peers[r].bootstrap(), secret, SecretHandshake.ROLE_PEER, rank, r, 1000);
                        }
                        l = links[r];
                    }
                    l.send(rank, Wire.ABORT, notice);
                } catch (IOException e) {
                    log.info(LogSubsystem.BOOTSTRAP, "Bootstrap: could not tell %s about the failure: %s", describe(r),
                            e.getMessage());
                }
            }
        }, "jccl-abort-notices-r" + rank);
        t.setDaemon(true);
        noticeThread = t;
        t.start();
    }

    /** A peer is gone: its waits fail at once; while monitoring and not closing, the communicator fails. */
    private void peerGone(int peer, String why) {
        boolean report;
        synchronized (mailbox) {
            if (gone[peer] != null) {
                return;
            }
            gone[peer] = why;
            mailbox.notifyAll();
            report = monitoring && !closing && failure == null;
        }
        if (report) {
            JcclException e = new JcclException(NetResult.REMOTE_ERROR, peer, why, null);
            log.warn("Bootstrap: rank %d: %s", rank, why);
            fail(e);
            listener.failed(e);
        }
    }

    private final class Handler implements BootstrapServer.Handler {
        @Override
        public void onFrame(BootstrapServer.Inbound from, int src, int tag, byte[] payload) {
            SecretHandshake.Identity id = from.identity();
            if (id.role() != SecretHandshake.ROLE_PEER || src != id.rank() || src < 0 || src >= nranks) {
                log.warn("Bootstrap: rank %d dropped a frame claiming rank %d from %s", rank, src, from.remote);
                BootstrapServer.closeQuietly(from.channel);
                return;
            }
            synchronized (mailbox) {
                lastHeard[src] = System.nanoTime();
            }
            switch (tag) {
                case Wire.HEARTBEAT -> { }
                case Wire.GOODBYE -> {
                    synchronized (mailbox) {
                        left[src] = true;
                    }
                    if (monitoring && !closing) {
                        peerGone(src, describe(src) + " closed its communicator while rank " + rank + " still uses it");
                    }
                }
                case Wire.ABORT -> onAbortNotice(src, payload);
                case Wire.STATUS_QUERY -> answerStatus(src);
                case Wire.RECOVERY -> {
                    synchronized (mailbox) {
                        recovery.computeIfAbsent(src, k -> new ArrayDeque<>()).add(payload);
                        mailbox.notifyAll();
                    }
                }
                default -> {
                    synchronized (mailbox) {
                        mailbox.computeIfAbsent(((long) src << 32) | (tag & 0xffffffffL), k -> new ArrayDeque<>())
                                .add(payload);
                        mailbox.notifyAll();
                    }
                }
            }
        }

        private void answerStatus(int src) {
            try {
                PeerLink l = link(src, System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
                l.send(rank, Wire.STATUS_REPLY, ByteBuffer.allocate(8).putLong(status.getAsLong()).array());
            } catch (IOException | JcclException e) {
                log.info(LogSubsystem.BOOTSTRAP, "Bootstrap: could not answer %s: %s", describe(src), e.getMessage());
            }
        }

        private void onAbortNotice(int src, byte[] payload) {
            String why;
            int failedRank;
            try {
                Wire.Abort a = Wire.Abort.decode(payload);
                failedRank = a.failedRank();
                why = a.reason();
            } catch (IOException e) {
                failedRank = src;
                why = "(unreadable reason)";
            }
            JcclException e = new JcclException(NetResult.REMOTE_ERROR, failedRank, describe(src) + " reports: " + why,
                    null);
            boolean first;
            synchronized (mailbox) {
                first = failure == null;
                if (first) {
                    failure = e;
                }
                mailbox.notifyAll();
            }
            if (first && !closing) {
                log.warn("Bootstrap: rank %d: %s", rank, e.getMessage());
                listener.failed(e);
            }
        }

        @Override
        public void onClosed(BootstrapServer.Inbound from, String cause) {
            int src = from.identity().rank();
            if (from.identity().role() != SecretHandshake.ROLE_PEER || src < 0 || src >= nranks) {
                return;
            }
            boolean leftOnPurpose;
            synchronized (mailbox) {
                leftOnPurpose = left[src];
            }
            if (!leftOnPurpose) {
                peerGone(src, describe(src) + " is gone: its bootstrap connection to rank " + rank + " ended (" + cause
                        + ") without closing the communicator; did its process die?");
            }
        }

        @Override
        public void onTick(long now) {
            if (!monitoring || nranks == 1) {
                return;
            }
            int next = (rank + 1) % nranks;
            int prev = (rank - 1 + nranks) % nranks;
            if (now - nextHeartbeat >= 0) {
                nextHeartbeat = now + peerTimeoutNanos / 4;
                heartbeat(next);
                if (prev != next) {
                    heartbeat(prev);
                }
            }
            if (closing) {
                return;
            }
            checkHeard(next, now);
            checkHeard(prev, now);
        }

        private void heartbeat(int peer) {
            PeerLink l;
            synchronized (linkLocks[peer]) {
                l = links[peer];
            }
            if (l == null || gone[peer] != null) {
                return;
            }
            try {
                l.send(rank, Wire.HEARTBEAT, new byte[0]);
            } catch (IOException e) {
                peerGone(peer, describe(peer) + " is gone: rank " + rank + " cannot send it heartbeats ("
                        + e.getMessage() + ")");
            }
        }

        private void checkHeard(int peer, long now) {
            long heard;
            synchronized (mailbox) {
                heard = lastHeard[peer];
            }
            if (now - heard > peerTimeoutNanos && gone[peer] == null) {
                peerGone(peer, describe(peer) + " sent no heartbeat to rank " + rank + " for "
                        + TimeUnit.NANOSECONDS.toMillis(now - heard) + " ms (frozen, or its host unreachable)");
            }
        }

        @Override
        public void onDropped(String remote, String why) {
            log.warn("Bootstrap: rank %d dropped a connection from %s: %s", rank, remote, why);
        }
    }

    /**
     * Closes links and the listener. With {@code goodbye}, first tells every linked peer that this
     * end of stream is on purpose.
     */
    public void close(boolean goodbye) {
        closing = true;
        Thread notices = noticeThread;
        if (notices != null && notices != Thread.currentThread()) {
            try {
                notices.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (int r = 0; r < nranks; r++) {
            PeerLink l;
            synchronized (linkLocks[r]) {
                l = links[r];
                links[r] = null;
            }
            if (l != null) {
                if (goodbye) {
                    try {
                        l.send(rank, Wire.GOODBYE, new byte[0]);
                    } catch (IOException ignored) {
                        // The peer is gone already; nothing to tell it.
                    }
                }
                l.close();
            }
        }
        server.close();
        synchronized (mailbox) {
            mailbox.notifyAll();
        }
    }

    @Override
    public void close() {
        close(true);
    }

    private static int remainingMs(long deadline, int cap) {
        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        return (int) Math.max(1, Math.min(cap, ms));
    }

    private static void sleepMs(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "interrupted during bootstrap", e);
        }
    }
}
