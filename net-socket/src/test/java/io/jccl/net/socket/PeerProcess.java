package io.jccl.net.socket;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

/**
 * The far end for {@link SocketFaultTest} and {@link SocketLivenessTest}, run in its own JVM so
 * that a test can kill or freeze it: prints its listen handle, connects both ways to the test's
 * handle (read from stdin), posts one 64 MiB receive (except {@code late}), prints READY, then, by
 * its argument:
 * <ul>
 *   <li>{@code idle} (or none): never progresses the receive and waits to be killed;</li>
 *   <li>{@code active}: keeps testing its receive (as NCCL's proxy would) until it is frozen or killed;</li>
 *   <li>{@code survivor}: keeps testing its receive, then prints RECEIVED, or FAILED and the error;</li>
 *   <li>{@code late MS}: sleeps MS milliseconds (alive, but posting nothing, like a rank that
 *       computes), then posts its receive, sends 1 MiB of pattern 7, completes both, prints DONE and
 *       waits.</li>
 * </ul>
 */
public final class PeerProcess {
    private PeerProcess() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length == 0 ? "idle" : args[0];
        SocketNetPlugin net = new SocketNetPlugin();
        net.init(NetLogger.noop());
        NetHandle mine = NetHandle.allocate();
        ListenComm listen = net.listen(0, mine);
        System.out.println(HexFormat.of().formatHex(mine.toByteArray()));
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        NetHandle theirs = NetHandle.fromBytes(HexFormat.of().parseHex(in.readLine().trim()));
        SendComm send = null;
        RecvComm recv = null;
        while (send == null || recv == null) {
            if (send == null) {
                send = net.connect(0, theirs);
            }
            if (recv == null) {
                recv = net.accept(listen);
            }
        }
        MemorySegment buffer = Arena.global().allocate(64L << 20);
        MemoryHandle mh = net.regMr(recv, buffer, PointerType.HOST);
        boolean late = mode.equals("late");
        NetRequest receiving = late ? null : post(net, recv, buffer, mh);
        System.out.println("READY");
        System.out.flush();
        switch (mode) {
            case "active" -> {
                while (!net.test(receiving, null)) {
                    Thread.onSpinWait();
                }
            }
            case "survivor" -> {
                try {
                    while (!net.test(receiving, null)) {
                        Thread.onSpinWait();
                    }
                    System.out.println("RECEIVED");
                } catch (NetException e) {
                    System.out.println("FAILED " + e.getMessage());
                }
                System.out.flush();
            }
            case "late" -> {
                Thread.sleep(Long.parseLong(args[1]));
                receiving = post(net, recv, buffer, mh);
                MemorySegment out = Arena.global().allocate(1 << 20);
                Loopback.fillPattern(out, 7);
                MemoryHandle smh = net.regMr(send, out, PointerType.HOST);
                NetRequest sending;
                while ((sending = net.isend(send, out, 0, smh)) == null) {
                    Thread.onSpinWait();
                }
                boolean sent = false;
                boolean received = false;
                while (!sent || !received) {
                    sent = sent || net.test(sending, null);
                    received = received || net.test(receiving, null);
                }
                System.out.println("DONE");
                System.out.flush();
            }
            default -> {
            }
        }
        Thread.sleep(Long.MAX_VALUE);
    }

    private static NetRequest post(SocketNetPlugin net, RecvComm recv, MemorySegment buffer, MemoryHandle mh)
            throws NetException {
        return net.irecv(recv, 1, new MemorySegment[] {buffer}, new int[] {0}, new MemoryHandle[] {mh});
    }
}
