package io.jccl.net.socket;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

/**
 * The far end for {@link SocketFaultTest}, run in its own JVM so that the test can kill it: prints
 * its listen handle, connects both ways to the test's handle (read from stdin), posts one large
 * receive that it never progresses, prints READY, then waits to be killed.
 */
public final class PeerProcess {
    public static void main(String[] args) throws Exception {
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
        net.irecv(recv, 1, new MemorySegment[] {buffer}, new int[] {0}, new MemoryHandle[] {mh});
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
