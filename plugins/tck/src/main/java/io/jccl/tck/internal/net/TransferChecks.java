package io.jccl.tck.internal.net;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.NetRequest;
import io.jccl.spi.NetResult;
import io.jccl.spi.PointerType;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.MessagePattern;
import io.jccl.tck.internal.net.Exchange.Message;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The transfer rules ({@code xfer.*}). */
public final class TransferChecks {
    private final NetKit kit;

    public TransferChecks(NetKit kit) {
        this.kit = kit;
    }

    private static int randomSize(SplittableRandom r, long max) {
        return (int) r.nextLong(max + 1);
    }

    /**
     * Receives of one fixed size, as NCCL posts its slots, and messages alternating between small
     * (inline-sized) and large (chunked) ones: the mix where one kind overtakes the other.
     */
    public void messagesArriveInOrder() throws NetException {
        SplittableRandom r = kit.random("xfer.1");
        long slot = 256 << 10;
        List<Message> msgs = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            long size = i % 2 == 0 ? randomSize(r, 1024) : (64 << 10) + randomSize(r, slot - (64 << 10));
            msgs.add(new Message(size, slot));
        }
        try (Link link = kit.connect()) {
            new Exchange(kit, "xfer.1").add(link, msgs, 8).run();
        }
    }

    /** @return 0, 1, odd sizes and every power of two up to the largest message, ascending */
    public List<Long> sizesToCheck() {
        long max = kit.settings().maxMessageSize();
        TreeSet<Long> sizes = new TreeSet<>(List.of(0L, 1L, 3L, 7L, 9L, 63L, 65L, 4095L, 4097L, 65_537L,
                (1L << 20) + 1, (1L << 20) * 3 + 7));
        for (long p = 1; p <= max; p <<= 1) {
            sizes.add(p);
        }
        sizes.removeIf(s -> s > max);
        sizes.add(max);
        return new ArrayList<>(sizes);
    }

    public void everySizeArrivesIntact() throws NetException {
        List<Message> msgs = sizesToCheck().stream().map(Message::exact).toList();
        try (Link link = kit.connect()) {
            new Exchange(kit, "xfer.2").add(link, msgs, 1).run();
        }
    }

    public void largerReceiveReportsRealSize() throws NetException {
        long capacity = Math.min(kit.settings().maxMessageSize(), 4L << 20);
        List<Message> msgs = new ArrayList<>();
        for (long size : new long[] {0, 1, 1000, 4096, 65_537, (1L << 20) + 3}) {
            if (size < capacity) {
                msgs.add(new Message(size, capacity));
            }
        }
        try (Link link = kit.connect()) {
            new Exchange(kit, "xfer.3").add(link, msgs, 3).run();
        }
    }

    public void sendLargerThanReceiveFails() throws NetException {
        long capacity = 65_536;
        long size = capacity + 1;
        MemorySegment sendBuf = NetKit.allocate(size);
        MemorySegment recvBuf = NetKit.allocate(capacity);
        MessagePattern.fill(sendBuf, kit.seed("xfer.4", 0));
        Link link = kit.connect();
        try {
            MemoryHandle smh = link.registerSend(sendBuf);
            MemoryHandle rmh = link.registerRecv(recvBuf);
            Batch b = kit.batch();
            int recv = b.add("the receive (" + capacity + "-byte buffer)",
                    () -> kit.irecv(link.recv(), recvBuf, Exchange.TAG, rmh), new int[1]);
            int send = b.add("the send (" + size + " bytes)", () -> kit.isend(link.send(), sendBuf, Exchange.TAG, smh),
                    new int[1]);
            b.runUntil(Deadline.after(kit.settings().peerDeathTimeout()));
            if (b.state(recv) == Batch.State.DONE) {
                fail("a " + size + "-byte send into a " + capacity + "-byte receive completed with test reporting "
                        + b.sizes(recv)[0] + " bytes: the message was truncated silently; the receive must fail with "
                        + "ncclInvalidUsage (spec 5.10)");
            }
            if (b.state(recv) != Batch.State.FAILED) {
                fail("a " + size + "-byte send into a " + capacity + "-byte receive: the receive neither completed nor "
                        + "failed within " + Deadline.format(kit.settings().peerDeathTimeout()) + " (" + b.describeOpen()
                        + "); it must fail with ncclInvalidUsage");
            }
            assertEquals(NetResult.INVALID_USAGE, b.error(recv).result(), "the receive failed with " + b.error(recv)
                    + "; a message larger than its buffer is ncclInvalidUsage");
            if (b.state(send) == Batch.State.UNPOSTED || b.state(send) == Batch.State.PENDING) {
                fail("the " + size + "-byte send into a " + capacity + "-byte receive was still "
                        + (b.state(send) == Batch.State.PENDING ? "pending" : "refused with null (would block)")
                        + " " + Deadline.format(kit.settings().peerDeathTimeout()) + " after it was posted: the "
                        + "sender's request must fail too, not hang");
            }
            if (b.state(send) == Batch.State.DONE) {
                fail("the " + size + "-byte send into a " + capacity + "-byte receive completed successfully although "
                        + "the receiver refused it: the request must fail on both sides (NetPlugin.irecv)");
            }
        } finally {
            closeQuietly(link);
        }
    }

    static void closeQuietly(Link link) {
        try {
            link.close();
        } catch (NetException | RuntimeException e) {
            // The link failed on purpose; closing it only has to return.
        }
    }

    public void maxRequestsInFlight() throws NetException {
        SplittableRandom r = kit.random("xfer.5");
        int window = NetPlugin.MAX_REQUESTS;
        List<Message> msgs = new ArrayList<>();
        for (int i = 0; i < 2 * window; i++) {
            msgs.add(Message.exact(1 + randomSize(r, 16 << 10)));
        }
        try (Link link = kit.connect()) {
            Exchange ex = new Exchange(kit, "xfer.5").add(link, msgs, window);
            ex.run();
            if (ex.peakRecvsInFlight() < window) {
                fail("at most " + ex.peakRecvsInFlight() + " receives were ever in flight on the receive comm: irecv "
                        + "returned null (would block) with fewer than " + window + " (NCCL_NET_MAX_REQUESTS) pending");
            }
            if (ex.peakSendsInFlight() < window) {
                fail("at most " + ex.peakSendsInFlight() + " sends were ever in flight on the send comm, with all "
                        + "their receives posted: isend returned null (would block) with fewer than " + window
                        + " (NCCL_NET_MAX_REQUESTS) pending");
            }
        }
    }

    public void wouldBlockIsRetriedAndDeliveredOnce() throws NetException {
        long a = 4096;
        long b = 100;
        MemorySegment sendBuf = NetKit.allocate(a + b);
        MemorySegment recvBuf = NetKit.allocate(2 * a);
        MemorySegment sendA = sendBuf.asSlice(0, a);
        MemorySegment sendB = sendBuf.asSlice(a, b);
        MessagePattern.fill(sendA, kit.seed("xfer.6", 0));
        MessagePattern.fill(sendB, kit.seed("xfer.6", 1));
        try (Link link = kit.connect()) {
            MemoryHandle smh = link.registerSend(sendBuf);
            MemoryHandle rmh = link.registerRecv(recvBuf);
            // A send before any receive is posted: the transport may take it or say "would block".
            NetRequest early = null;
            Deadline d = Deadline.after(Duration.ofMillis(50));
            int nulls = 0;
            while (early == null && !d.expired()) {
                early = kit.isend(link.send(), sendA, Exchange.TAG, smh);
                nulls += early == null ? 1 : 0;
            }
            Batch batch = kit.batch();
            int ra = batch.add("receive 1", () -> kit.irecv(link.recv(), recvBuf.asSlice(0, a), Exchange.TAG, rmh),
                    new int[1]);
            int rb = batch.add("receive 2", () -> kit.irecv(link.recv(), recvBuf.asSlice(a, a), Exchange.TAG, rmh),
                    new int[1]);
            int sa = early != null ? batch.addPosted("send A (4096 bytes)", early, new int[1])
                    : batch.add("send A (4096 bytes), retried after " + nulls + " nulls",
                            () -> kit.isend(link.send(), sendA, Exchange.TAG, smh), new int[1]);
            int sb = batch.add("send B (100 bytes)", () -> kit.isend(link.send(), sendB, Exchange.TAG, smh), new int[1]);
            batch.run();
            assertEquals(a, batch.sizes(ra)[0], "receive 1 should hold send A (" + a + " bytes) after isend returned "
                    + "null " + nulls + " times; test reported " + batch.sizes(ra)[0] + " bytes");
            assertEquals(b, batch.sizes(rb)[0], "receive 2 should hold send B (" + b + " bytes); test reported "
                    + batch.sizes(rb)[0] + " bytes: a send that returned null was queued anyway and delivered twice?");
            String m1 = MessagePattern.describeMismatch(recvBuf.asSlice(0, a), kit.seed("xfer.6", 0));
            String m2 = MessagePattern.describeMismatch(recvBuf.asSlice(a, b), kit.seed("xfer.6", 1),
                    kit.seed("xfer.6", 0));
            if (m1 != null || m2 != null) {
                fail("after isend returned null " + nulls + " times and was called again: "
                        + (m1 != null ? "receive 1: " + m1 : "receive 2: " + m2));
            }
            assertEquals(a, batch.sizes(sa)[0], "test reported the wrong size for send A");
            assertEquals(b, batch.sizes(sb)[0], "test reported the wrong size for send B");
        }
    }

    public void groupedReceivesRouteByTag() throws NetException {
        NetProperties p = kit.properties();
        assumeTrue(p.maxRecvs() > 1, "needs grouped receives: device 0 reports maxRecvs = " + p.maxRecvs());
        int n = Math.min(p.maxRecvs(), 8);
        long slot = 16 << 10;
        MemorySegment sendBuf = NetKit.allocate(n * slot);
        MemorySegment recvBuf = NetKit.allocate(n * slot);
        MemorySegment[] data = new MemorySegment[n];
        int[] tags = new int[n];
        long[] sizes = new long[n];
        try (Link link = kit.connect()) {
            MemoryHandle smh = link.registerSend(sendBuf);
            MemoryHandle rmh = link.registerRecv(recvBuf);
            MemoryHandle[] mhs = new MemoryHandle[n];
            for (int i = 0; i < n; i++) {
                data[i] = recvBuf.asSlice(i * slot, slot);
                tags[i] = 100 + i;
                sizes[i] = 1000L * (i + 1) + i;
                mhs[i] = rmh;
                MessagePattern.fill(sendBuf.asSlice(i * slot, sizes[i]), kit.seed("xfer.7", i));
            }
            Batch batch = kit.batch();
            int[] got = new int[n];
            int recv = batch.add("grouped receive of " + n + " buffers", () -> kit.irecv(link.recv(), n, data, tags, mhs),
                    got);
            for (int i = n - 1; i >= 0; i--) {
                MemorySegment s = sendBuf.asSlice(i * slot, sizes[i]);
                int tag = tags[i];
                batch.add("send with tag " + tag, () -> kit.isend(link.send(), s, tag, smh), new int[1]);
            }
            batch.run();
            for (int i = 0; i < n; i++) {
                assertEquals(sizes[i], batch.sizes(recv)[i], "buffer " + i + " (tag " + tags[i] + "): test reported "
                        + batch.sizes(recv)[i] + " bytes, the send with that tag carried " + sizes[i]);
                String m = MessagePattern.describeMismatch(data[i].asSlice(0, sizes[i]), kit.seed("xfer.7", i));
                if (m != null) {
                    fail("buffer " + i + " (tag " + tags[i] + ") does not hold the send with that tag: " + m
                            + "; sends were posted in reverse tag order and must land by tag, not by arrival");
                }
            }
        }
    }

    public void hostFlushIsHarmless() throws NetException {
        long size = 4096;
        MemorySegment sendBuf = NetKit.allocate(size);
        MemorySegment recvBuf = NetKit.allocate(size);
        MessagePattern.fill(sendBuf, kit.seed("xfer.8", 0));
        try (Link link = kit.connect()) {
            MemoryHandle smh = link.registerSend(sendBuf);
            MemoryHandle rmh = link.registerRecv(recvBuf);
            Batch b = kit.batch();
            b.add("receive", () -> kit.irecv(link.recv(), recvBuf, Exchange.TAG, rmh), new int[1]);
            b.add("send", () -> kit.isend(link.send(), sendBuf, Exchange.TAG, smh), new int[1]);
            b.run();
            NetRequest flush = kit.iflush(link.recv(), 1, new MemorySegment[] {recvBuf}, new MemoryHandle[] {rmh});
            if (flush != null) {
                Batch f = kit.batch();
                f.addPosted("iflush of a host receive", flush, null);
                f.run();
            }
            String m = MessagePattern.describeMismatch(recvBuf, kit.seed("xfer.8", 0));
            if (m != null) {
                fail("after iflush: " + m);
            }
        }
    }

    public void registrationsPairUp() throws NetException {
        long size = 1 << 20;
        MemorySegment sendBuf = NetKit.allocate(size);
        MemorySegment recvBuf = NetKit.allocate(size);
        SplittableRandom r = kit.random("xfer.9");
        try (Link link = kit.connect()) {
            NetPlugin plugin = kit.plugin();
            for (int i = 0; i < 200; i++) {
                plugin.deregMr(link.send(), plugin.regMr(link.send(), sendBuf, PointerType.HOST));
                plugin.deregMr(link.recv(), plugin.regMr(link.recv(), recvBuf, PointerType.HOST));
            }
            List<MemoryHandle> alive = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                alive.add(plugin.regMr(link.send(), sendBuf.asSlice(i * 4096L, 64 << 10), PointerType.HOST));
            }
            Collections.shuffle(alive, new Random(r.nextLong()));
            for (MemoryHandle h : alive) {
                plugin.deregMr(link.send(), h);
            }
            // One registration of each whole buffer; sends and receives at odd offsets inside them
            // (send offset, receive offset, size; the ranges do not overlap).
            MemoryHandle smh = link.registerSend(sendBuf);
            MemoryHandle rmh = link.registerRecv(recvBuf);
            long[][] cases = {{1, 3, 1000}, {1025, 1029, 65_537}, {70_001, 70_003, 3}, {size - 5, size - 5, 5}};
            Batch b = kit.batch();
            for (int i = 0; i < cases.length; i++) {
                long[] c = cases[i];
                MemorySegment s = sendBuf.asSlice(c[0], c[2]);
                MemorySegment d = recvBuf.asSlice(c[1], c[2]);
                MessagePattern.fill(s, kit.seed("xfer.9", i));
                b.add("receive at offset " + c[1], () -> kit.irecv(link.recv(), d, Exchange.TAG, rmh), new int[1]);
                b.add("send from offset " + c[0], () -> kit.isend(link.send(), s, Exchange.TAG, smh), new int[1]);
            }
            b.run();
            for (int i = 0; i < cases.length; i++) {
                long[] c = cases[i];
                String m = MessagePattern.describeMismatch(recvBuf.asSlice(c[1], c[2]), kit.seed("xfer.9", i));
                if (m != null) {
                    fail("a " + c[2] + "-byte message sent from offset " + c[0] + " of a registered buffer into offset "
                            + c[1] + " of another: " + m + "; NCCL registers whole buffers once and sends from "
                            + "anywhere inside them");
                }
            }
        }
    }

    public void cudaRegistrationRefusedWithoutCuda() throws NetException {
        NetProperties p = kit.properties();
        assumeTrue(!p.supports(PointerType.CUDA), "device 0 supports CUDA pointers; the kit runs on host memory only");
        MemorySegment buf = NetKit.allocate(4096);
        try (Link link = kit.connect()) {
            try {
                MemoryHandle h = kit.plugin().regMr(link.send(), buf, PointerType.CUDA);
                kit.plugin().deregMr(link.send(), h);
                fail("regMr(type CUDA) succeeded on a device whose ptrSupport is " + PointerType.describe(p.ptrSupport()));
            } catch (NetException e) {
                assertEquals(NetResult.INVALID_USAGE, e.result(), "regMr(type CUDA) on a host-only device failed with "
                        + e + "; an unsupported memory type is ncclInvalidUsage");
            }
        }
    }

    public void manyCommsAtOnce() throws NetException {
        int pairs = Math.max(1, Math.min(16, kit.properties().maxComms() / 2));
        SplittableRandom r = kit.random("xfer.11");
        List<Link> links = new ArrayList<>();
        try {
            Exchange ex = new Exchange(kit, "xfer.11");
            for (int i = 0; i < pairs; i++) {
                Link l = kit.connect();
                links.add(l);
                List<Message> msgs = new ArrayList<>();
                for (int m = 0; m < 8; m++) {
                    msgs.add(Message.exact(randomSize(r, 256 << 10)));
                }
                ex.add(l, msgs, 2);
            }
            ex.run();
        } finally {
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
    }

    public void randomStress() throws NetException {
        SplittableRandom r = kit.random("xfer.12");
        long max = Math.min(kit.settings().maxMessageSize(), 4L << 20);
        int linksCount = 3;
        int total = kit.settings().stressMessages();
        List<Link> links = new ArrayList<>();
        try {
            Exchange ex = new Exchange(kit, "xfer.12");
            for (int i = 0; i < linksCount; i++) {
                Link l = kit.connect();
                links.add(l);
                List<Message> msgs = new ArrayList<>();
                for (int m = i; m < total; m += linksCount) {
                    double kind = r.nextDouble();
                    long size = kind < 0.5 ? r.nextLong(257) : kind < 0.8 ? r.nextLong(Math.min(max, 64 << 10) + 1)
                            : r.nextLong(max + 1);
                    long capacity = r.nextBoolean() ? size : Math.min(Integer.MAX_VALUE, size + r.nextLong(size + 1));
                    msgs.add(new Message(size, capacity));
                }
                ex.add(l, msgs, 1 + r.nextInt(8));
            }
            ex.run();
        } finally {
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
    }
}
