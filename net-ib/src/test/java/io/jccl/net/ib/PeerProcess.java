package io.jccl.net.ib;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The peer that {@link IbFaultTest} starts as a separate JVM and then kills: a real process whose
 * death its peer must notice.
 *
 * <ul>
 *   <li>{@code receiver DIR N SIZE}: listens, writes the handle to {@code DIR/handle}, accepts,
 *       posts {@code N} receives of {@code SIZE} bytes, prints {@code READY}, waits.</li>
 *   <li>{@code sender DIR}: connects to the handle in {@code DIR/handle}, prints {@code READY},
 *       waits without sending.</li>
 * </ul>
 */
public final class PeerProcess {
    private PeerProcess() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[1]);
        IbNetPlugin plugin = new IbNetPlugin();
        plugin.init(IbTestSupport.quiet());
        if (args[0].equals("receiver")) {
            int n = Integer.parseInt(args[2]);
            long size = Long.parseLong(args[3]);
            NetHandle handle = NetHandle.allocate();
            ListenComm listen = plugin.listen(0, handle);
            Path tmp = dir.resolve("handle.tmp");
            Files.write(tmp, handle.toByteArray());
            Files.move(tmp, dir.resolve("handle"));
            RecvComm recv;
            while ((recv = plugin.accept(listen)) == null) {
                Thread.onSpinWait();
            }
            MemorySegment buf = Arena.global().allocate(size, 4096);
            MemoryHandle mh = plugin.regMr(recv, buf, PointerType.HOST);
            for (int i = 0; i < n; i++) {
                NetRequest r;
                while ((r = plugin.irecv(recv, 1, new MemorySegment[] {buf}, new int[] {0}, new MemoryHandle[] {mh}))
                        == null) {
                    Thread.onSpinWait();
                }
            }
        } else {
            NetHandle handle = NetHandle.fromBytes(Files.readAllBytes(dir.resolve("handle")));
            SendComm send;
            while ((send = plugin.connect(0, handle)) == null) {
                Thread.onSpinWait();
            }
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
