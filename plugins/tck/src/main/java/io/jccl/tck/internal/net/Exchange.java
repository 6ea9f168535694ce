package io.jccl.tck.internal.net;

import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetRequest;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.Deadline;
import io.jccl.tck.internal.MessagePattern;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Moves messages over one or more links the way NCCL's proxy does, on one thread: receives and
 * sends posted ahead up to a window per link (a would-block {@code null} is retried on the next
 * pass), every outstanding request tested in posting order, all links interleaved. Every message
 * carries its own {@link MessagePattern}; a receive is checked for its reported size and every
 * byte, a send for its reported size.
 *
 * <p>A pass that makes no progress (nothing posted, nothing completed) for the completion timeout
 * fails the rule with what is still pending.
 */
public final class Exchange {
    /** The tag of every send and receive of an exchange (NCCL passes the sender's rank). */
    public static final int TAG = 0x2A;

    /**
     * One message.
     *
     * @param size     bytes sent
     * @param capacity bytes of the receive buffer posted for it, at least {@code size}
     */
    public record Message(long size, long capacity) {
        public Message {
            if (size < 0 || capacity < size || capacity > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("size " + size + ", capacity " + capacity);
            }
        }

        /** @return a message received into a buffer of exactly its size */
        public static Message exact(long size) {
            return new Message(size, size);
        }
    }

    private final NetKit kit;
    private final String rule;
    private final List<Stream> streams = new ArrayList<>();
    private long messages;

    public Exchange(NetKit kit, String rule) {
        this.kit = kit;
        this.rule = rule;
    }

    /**
     * Adds a stream of messages over one link.
     *
     * @param window how many messages may be in flight at once on this link
     */
    public Exchange add(Link link, List<Message> msgs, int window) {
        streams.add(new Stream(streams.size(), link, msgs, window, messages));
        messages += msgs.size();
        return this;
    }

    /** @return the most sends that were in flight at once on any link */
    public int peakSendsInFlight() {
        return streams.stream().mapToInt(s -> s.peakSends).max().orElse(0);
    }

    /** @return the most receives that were in flight at once on any link */
    public int peakRecvsInFlight() {
        return streams.stream().mapToInt(s -> s.peakRecvs).max().orElse(0);
    }

    /**
     * Runs every stream to completion, checking every message; the registrations it makes are
     * released on success (and left to {@link Link#close} on failure).
     */
    public void run() throws NetException {
        long sendBytes = 0;
        long recvBytes = 0;
        for (Stream s : streams) {
            sendBytes += s.sendSlot * s.window;
            recvBytes += s.recvSlot * s.window;
        }
        MemorySegment sendArea = kit.sendArea(sendBytes);
        MemorySegment recvArea = kit.recvArea(recvBytes);
        long sendOff = 0;
        long recvOff = 0;
        for (Stream s : streams) {
            s.sendArea = sendArea.asSlice(sendOff, s.sendSlot * s.window);
            s.recvArea = recvArea.asSlice(recvOff, s.recvSlot * s.window);
            sendOff += s.sendArea.byteSize();
            recvOff += s.recvArea.byteSize();
            s.sendMh = s.link.registerSend(s.sendArea);
            s.recvMh[0] = s.link.registerRecv(s.recvArea);
        }

        Backoff idle = new Backoff();
        long lastProgress = System.nanoTime();
        long stallNanos = kit.settings().completionTimeout().toNanos();
        boolean done = false;
        while (!done) {
            boolean progress = false;
            done = true;
            for (Stream s : streams) {
                progress |= s.step();
                done &= s.finished();
            }
            if (progress) {
                lastProgress = System.nanoTime();
                idle.reset();
            } else if (!done) {
                if (System.nanoTime() - lastProgress > stallNanos) {
                    fail(stalled());
                }
                idle.idle();
            }
        }
        for (Stream s : streams) {
            s.link.deregister(s.sendMh);
            s.link.deregister(s.recvMh[0]);
        }
    }

    private String stalled() {
        StringBuilder sb = new StringBuilder("no request completed for ")
                .append(Deadline.format(kit.settings().completionTimeout()))
                .append(String.format(Locale.ROOT, " (seed 0x%x)", kit.settings().seed()));
        for (Stream s : streams) {
            if (!s.finished()) {
                sb.append("\n  ").append(s.describe());
            }
        }
        return sb.toString();
    }

    private final class Stream {
        final int index;
        final Link link;
        final Message[] msgs;
        final int window;
        final long[] seeds;
        final long sendSlot;
        final long recvSlot;
        final NetRequest[] sendReq;
        final NetRequest[] recvReq;
        final boolean[] sendDone;
        final boolean[] recvDone;
        final int[] sizes = new int[1];
        final MemorySegment[] recvData = new MemorySegment[1];
        final int[] tags = {TAG};
        final MemoryHandle[] recvMh = new MemoryHandle[1];
        MemorySegment sendArea;
        MemorySegment recvArea;
        MemoryHandle sendMh;
        int nextSend;
        int nextRecv;
        int lowSend;
        int lowRecv;
        boolean nextSendFilled;
        int peakSends;
        int peakRecvs;

        Stream(int index, Link link, List<Message> msgs, int window, long firstSeedIndex) {
            if (window < 1) {
                throw new IllegalArgumentException("window " + window);
            }
            this.index = index;
            this.link = link;
            this.msgs = msgs.toArray(new Message[0]);
            this.window = window;
            this.seeds = new long[this.msgs.length];
            long maxSize = 1;
            long maxCapacity = 1;
            for (int i = 0; i < this.msgs.length; i++) {
                seeds[i] = kit.seed(rule, firstSeedIndex + i);
                maxSize = Math.max(maxSize, this.msgs[i].size());
                maxCapacity = Math.max(maxCapacity, this.msgs[i].capacity());
            }
            this.sendSlot = align(maxSize);
            this.recvSlot = align(maxCapacity);
            this.sendReq = new NetRequest[window];
            this.recvReq = new NetRequest[window];
            this.sendDone = new boolean[this.msgs.length];
            this.recvDone = new boolean[this.msgs.length];
        }

        private static long align(long n) {
            return (n + 63) & ~63L;
        }

        boolean finished() {
            return lowSend == msgs.length && lowRecv == msgs.length;
        }

        boolean step() throws NetException {
            boolean progress = false;
            while (nextRecv < msgs.length && (nextRecv < window || recvDone[nextRecv - window])) {
                int slot = nextRecv % window;
                recvData[0] = recvArea.asSlice(slot * recvSlot, msgs[nextRecv].capacity());
                NetRequest r = kit.irecv(link.recv(), 1, recvData, tags, recvMh);
                if (r == null) {
                    break;
                }
                recvReq[slot] = r;
                nextRecv++;
                peakRecvs = Math.max(peakRecvs, nextRecv - lowRecv);
                progress = true;
            }
            while (nextSend < msgs.length && (nextSend < window || sendDone[nextSend - window])) {
                int slot = nextSend % window;
                MemorySegment data = sendArea.asSlice(slot * sendSlot, msgs[nextSend].size());
                if (!nextSendFilled) {
                    MessagePattern.fill(data, seeds[nextSend]);
                    nextSendFilled = true;
                }
                NetRequest r = kit.isend(link.send(), data, TAG, sendMh);
                if (r == null) {
                    break;
                }
                nextSendFilled = false;
                sendReq[slot] = r;
                nextSend++;
                peakSends = Math.max(peakSends, nextSend - lowSend);
                progress = true;
            }
            // Sends first: by the time a receive is tested, later messages may have arrived too, which
            // is when a transport that completes receives out of order gives itself away.
            for (int j = lowSend; j < nextSend; j++) {
                if (!sendDone[j] && testSend(j)) {
                    sendDone[j] = true;
                    progress = true;
                }
            }
            while (lowSend < nextSend && sendDone[lowSend]) {
                lowSend++;
            }
            for (int j = lowRecv; j < nextRecv; j++) {
                if (!recvDone[j] && testRecv(j)) {
                    recvDone[j] = true;
                    progress = true;
                }
            }
            while (lowRecv < nextRecv && recvDone[lowRecv]) {
                lowRecv++;
            }
            return progress;
        }

        private String what(String side, int j) {
            return (streams.size() > 1 ? "link " + index + ", " : "") + side + " of message " + j + " ("
                    + msgs[j].size() + " bytes" + (msgs[j].capacity() != msgs[j].size()
                    ? " into a " + msgs[j].capacity() + "-byte buffer" : "") + ")";
        }

        private boolean testRecv(int j) throws NetException {
            sizes[0] = -1;
            boolean done;
            try {
                done = kit.test(recvReq[j % window], sizes);
            } catch (NetException e) {
                throw new AssertionError(what("receive", j) + " failed: " + e, e);
            }
            if (!done) {
                return false;
            }
            long size = msgs[j].size();
            if (sizes[0] != size) {
                fail(what("receive", j) + ": test reported " + sizes[0] + " bytes received"
                        + (sizes[0] == -1 ? " (sizes[0] was not written)" : "")
                        + "; sizes[i] must be the bytes the matching send carried (spec 5.11)");
            }
            MemorySegment got = recvArea.asSlice((long) (j % window) * recvSlot, size);
            long[] others = neighbours(j);
            String mismatch = MessagePattern.describeMismatch(got, seeds[j], others);
            if (mismatch != null) {
                fail(what("receive", j) + ": " + mismatch + String.format(Locale.ROOT, " (seed 0x%x)",
                        kit.settings().seed()));
            }
            return true;
        }

        private long[] neighbours(int j) {
            int from = Math.max(0, j - window);
            int to = Math.min(msgs.length, j + window + 1);
            long[] s = new long[to - from];
            for (int k = from; k < to; k++) {
                s[k - from] = seeds[k];
            }
            return s;
        }

        private boolean testSend(int j) throws NetException {
            sizes[0] = -1;
            boolean done;
            try {
                done = kit.test(sendReq[j % window], sizes);
            } catch (NetException e) {
                throw new AssertionError(what("send", j) + " failed: " + e, e);
            }
            if (done && sizes[0] != msgs[j].size()) {
                fail(what("send", j) + ": test reported " + sizes[0] + " bytes sent"
                        + (sizes[0] == -1 ? " (sizes[0] was not written)" : "")
                        + "; sizes[0] must be the bytes sent (spec 5.11)");
            }
            return done;
        }

        String describe() {
            StringBuilder sb = new StringBuilder();
            if (streams.size() > 1) {
                sb.append("link ").append(index).append(": ");
            }
            sb.append(lowRecv).append(" of ").append(msgs.length).append(" messages fully received");
            pending(sb, "receives", recvDone, lowRecv, nextRecv);
            pending(sb, "sends", sendDone, lowSend, nextSend);
            if (nextRecv < msgs.length) {
                sb.append("; irecv of message ").append(nextRecv).append(" not posted yet");
            }
            if (nextSend < msgs.length) {
                sb.append("; isend of message ").append(nextSend).append(nextSend < nextRecv
                        ? " keeps returning null (would block) although its receive is posted" : " not posted yet");
            }
            for (int j = lowRecv; j < nextRecv; j++) {
                if (!recvDone[j] && j + 1 < nextRecv && recvDone[j + 1]) {
                    sb.append("; the receive of message ").append(j + 1).append(" completed but not that of message ")
                            .append(j).append(": a completion was lost, or messages overtook each other");
                    break;
                }
            }
            return sb.toString();
        }

        private void pending(StringBuilder sb, String what, boolean[] done, int low, int next) {
            List<Integer> open = new ArrayList<>();
            for (int j = low; j < next; j++) {
                if (!done[j]) {
                    open.add(j);
                }
            }
            if (!open.isEmpty()) {
                sb.append("; ").append(open.size()).append(' ').append(what).append(" posted and never completed "
                        + "(messages ").append(open.size() > 8 ? open.subList(0, 8) + "..." : open).append(')');
            }
        }
    }
}
