package io.jccl.net.collnet;

import io.jccl.spi.CollComm;
import io.jccl.spi.DataType;
import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetException;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetLogger;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.ReduceOp;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.HexFormat;

/**
 * One rank of a two-rank JcclCollNet group in a JVM of its own, so that {@link CollNetFailureTest}
 * can kill or freeze it: prints its handle, reads the other rank's from stdin, connects as rank
 * {@code args[0]}, then all-reduces 1 MiB of floats in a loop, printing READY after the first, until
 * a request fails (prints FAILED and the reason).
 */
public final class CollNetPeer {
    private CollNetPeer() {
    }

    public static void main(String[] args) throws Exception {
        int rank = Integer.parseInt(args[0]);
        JcclCollNetPlugin net = new JcclCollNetPlugin();
        net.init(NetLogger.noop());
        NetHandle mine = NetHandle.allocate();
        ListenComm listen = net.listen(0, mine);
        System.out.println(HexFormat.of().formatHex(mine.toByteArray()));
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        NetHandle theirs = NetHandle.fromBytes(HexFormat.of().parseHex(in.readLine().trim()));
        NetHandle[] handles = rank == 0 ? new NetHandle[] {mine, theirs} : new NetHandle[] {theirs, mine};
        CollComm comm = net.connect(handles, rank, listen);
        net.closeListen(listen);
        try {
            loop(net, comm, () -> {
                System.out.println("READY");
                System.out.flush();
            });
        } catch (NetException e) {
            System.out.println("FAILED " + e.getMessage());
            System.out.flush();
        }
        Thread.sleep(60_000);
    }

    /** All-reduces 1 MiB of floats until a request fails; runs {@code first} after the first completes. */
    static void loop(JcclCollNetPlugin net, CollComm comm, Runnable first) throws NetException {
        MemorySegment buf = Arena.ofAuto().allocate(1 << 20, 4096);
        MemoryHandle mh = net.regMr(comm, buf, PointerType.HOST);
        long count = buf.byteSize() / 4;
        for (long i = 0; ; i++) {
            NetRequest r = null;
            while (r == null) {
                r = net.iallreduce(comm, buf, buf, count, DataType.FLOAT32, ReduceOp.SUM, mh, mh);
            }
            while (!net.test(r, null)) {
                Thread.onSpinWait();
            }
            if (i == 0) {
                first.run();
            }
        }
    }
}
