package io.jccl.tck.peer;

import io.jccl.spi.ListenComm;
import io.jccl.spi.MemoryHandle;
import io.jccl.spi.NetHandle;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetRequest;
import io.jccl.spi.PointerType;
import io.jccl.spi.RecvComm;
import io.jccl.spi.SendComm;
import io.jccl.spi.log.DebugLogger;
import io.jccl.tck.PeerTransport;
import io.jccl.tck.internal.Backoff;
import io.jccl.tck.internal.MessagePattern;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The kit's peer process: a second JVM that holds the other end of connections so that the kit can
 * kill it and watch what the surviving side does.
 *
 * <p>{@code java -cp <kit's class path> io.jccl.tck.peer.PeerMain <peer transport spec>}. It reads
 * one command a line on stdin and answers one line on stdout (the transport's log goes to
 * stderr):
 * <pre>
 *   (start)              READY name devices
 *   LISTEN               HANDLE hex          later: ACCEPTED
 *   CONNECT hex                              later: CONNECTED
 *   RECV count size      POSTED count        receives posted (retried while they would block), never tested
 *   SEND count size      POSTED count        sends posted likewise, never tested
 *   EXIT                 BYE                 closes everything and exits
 * </pre>
 * Failures answer {@code ERR message}. The peer tests none of its requests: it stands for a
 * process that stalls, then dies.
 */
public final class PeerMain {
    private final NetPlugin plugin;
    private final PrintStream out;
    private ListenComm listen;
    private RecvComm recv;
    private NetHandle connectHandle;
    private SendComm send;
    private final List<Runnable> retries = new ArrayList<>();

    private PeerMain(NetPlugin plugin, PrintStream out) {
        this.plugin = plugin;
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        if (args.length != 1) {
            out.println("ERR usage: PeerMain name:NAME|class:CLASS");
            System.exit(2);
        }
        NetPlugin plugin;
        try {
            plugin = PeerTransport.parse(args[0]).create();
            plugin.init(DebugLogger.fromEnvironment("[tck peer]"));
            out.println("READY " + plugin.name() + " " + plugin.devices());
        } catch (Exception | LinkageError e) {
            out.println("ERR " + oneLine(e.toString()));
            System.exit(1);
            return;
        }
        BlockingQueue<String> commands = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    commands.add(line.trim());
                }
            } catch (IOException e) {
                // The kit went away; EXIT below ends the peer.
            }
            commands.add("EXIT");
        }, "tck-peer-stdin");
        reader.setDaemon(true);
        reader.start();
        new PeerMain(plugin, out).run(commands);
    }

    private void run(BlockingQueue<String> commands) {
        Backoff idle = new Backoff();
        while (true) {
            boolean progress = false;
            String line = commands.poll();
            if (line != null) {
                progress = true;
                try {
                    if (!handle(line)) {
                        return;
                    }
                } catch (Exception | LinkageError e) {
                    out.println("ERR " + oneLine(e.toString()));
                }
            }
            try {
                progress |= poll();
            } catch (Exception | LinkageError e) {
                out.println("ERR " + oneLine(e.toString()));
                listen = null;
                connectHandle = null;
            }
            idle.after(progress);
        }
    }

    private boolean handle(String line) throws Exception {
        String[] w = line.split(" ");
        switch (w[0]) {
            case "LISTEN" -> {
                NetHandle h = NetHandle.allocate();
                listen = plugin.listen(0, h);
                out.println("HANDLE " + HexFormat.of().formatHex(h.toByteArray()));
            }
            case "CONNECT" -> connectHandle = NetHandle.fromBytes(HexFormat.of().parseHex(w[1]));
            case "RECV" -> post(Integer.parseInt(w[1]), Long.parseLong(w[2]), false);
            case "SEND" -> post(Integer.parseInt(w[1]), Long.parseLong(w[2]), true);
            case "EXIT" -> {
                closeAll();
                out.println("BYE");
                return false;
            }
            default -> out.println("ERR unknown command: " + line);
        }
        return true;
    }

    private boolean poll() throws Exception {
        boolean progress = false;
        if (listen != null && recv == null) {
            recv = plugin.accept(listen);
            if (recv != null) {
                plugin.closeListen(listen);
                listen = null;
                out.println("ACCEPTED");
                progress = true;
            }
        }
        if (connectHandle != null && send == null) {
            send = plugin.connect(0, connectHandle);
            if (send != null) {
                connectHandle = null;
                out.println("CONNECTED");
                progress = true;
            }
        }
        for (Runnable r : List.copyOf(retries)) {
            r.run();
        }
        return progress;
    }

    /** Posts {@code count} receives or sends of {@code size} bytes; those that would block are retried by {@link #poll}. */
    private void post(int count, long size, boolean sending) throws Exception {
        MemorySegment buf = Arena.ofAuto().allocate(Math.max(1, count * size), 4096);
        MemoryHandle mh = sending ? plugin.regMr(send, buf, PointerType.HOST) : plugin.regMr(recv, buf, PointerType.HOST);
        int[] posted = {0};
        Runnable attempt = new Runnable() {
            @Override
            public void run() {
                try {
                    while (posted[0] < count) {
                        MemorySegment data = buf.asSlice(posted[0] * size, size);
                        NetRequest r;
                        if (sending) {
                            MessagePattern.fill(data, posted[0]);
                            r = plugin.isend(send, data, 0x2A, mh);
                        } else {
                            r = plugin.irecv(recv, 1, new MemorySegment[] {data}, new int[] {0x2A}, new MemoryHandle[] {mh});
                        }
                        if (r == null) {
                            return;
                        }
                        posted[0]++;
                    }
                    retries.remove(this);
                } catch (Exception e) {
                    retries.remove(this);
                    out.println("ERR " + oneLine(e.toString()));
                }
            }
        };
        retries.add(attempt);
        attempt.run();
        out.println("POSTED " + posted[0]);
    }

    private void closeAll() {
        try {
            if (send != null) {
                plugin.closeSend(send);
            }
            if (recv != null) {
                plugin.closeRecv(recv);
            }
            if (listen != null) {
                plugin.closeListen(listen);
            }
            plugin.close();
        } catch (Exception e) {
            System.err.println("tck peer: close failed: " + e);
        }
    }

    private static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\r', ' ');
    }
}
