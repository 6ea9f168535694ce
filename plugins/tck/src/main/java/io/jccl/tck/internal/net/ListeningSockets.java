package io.jccl.tck.internal.net;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The TCP sockets this process listens on, read from Linux's {@code /proc}: the inodes of the
 * process's socket descriptors ({@code /proc/self/fd}) matched against the listening entries of
 * {@code /proc/self/net/tcp} and {@code tcp6}.
 *
 * <p>Comparing the set before and after {@code listen} finds the port a transport listens on
 * without knowing its handle format, so the kit can aim stray connections at any TCP-based
 * transport, Java or native.
 */
public final class ListeningSockets {
    private static final String LISTEN_STATE = "0A";

    private ListeningSockets() {
    }

    /** @return whether this system exposes the tables (Linux) */
    public static boolean supported() {
        return Files.isReadable(Path.of("/proc/self/net/tcp")) && Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /** @return the addresses this process listens on; empty where {@code /proc} cannot tell */
    public static Set<InetSocketAddress> ofThisProcess() {
        Set<String> inodes = socketInodes();
        Set<InetSocketAddress> out = new HashSet<>();
        read(Path.of("/proc/self/net/tcp"), inodes, out);
        read(Path.of("/proc/self/net/tcp6"), inodes, out);
        return out;
    }

    private static Set<String> socketInodes() {
        Set<String> inodes = new HashSet<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            fds.forEach(fd -> {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring(8, target.length() - 1));
                    }
                } catch (IOException | UnsupportedOperationException e) {
                    // The descriptor closed meanwhile, or is not a link: not a socket of interest.
                }
            });
        } catch (IOException e) {
            return inodes;
        }
        return inodes;
    }

    private static void read(Path table, Set<String> inodes, Set<InetSocketAddress> out) {
        List<String> lines;
        try {
            lines = Files.readAllLines(table);
        } catch (IOException e) {
            return;
        }
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 10 || !f[3].equals(LISTEN_STATE) || !inodes.contains(f[9])) {
                continue;
            }
            int colon = f[1].indexOf(':');
            try {
                InetAddress addr = address(f[1].substring(0, colon));
                int port = Integer.parseInt(f[1].substring(colon + 1), 16);
                out.add(new InetSocketAddress(addr, port));
            } catch (UnknownHostException | NumberFormatException e) {
                // An entry this parser does not understand is skipped.
            }
        }
    }

    /** The kernel prints the address as 32-bit words in host (little-endian) order. */
    private static InetAddress address(String hex) throws UnknownHostException {
        byte[] b = new byte[hex.length() / 2];
        for (int word = 0; word < b.length / 4; word++) {
            for (int i = 0; i < 4; i++) {
                int at = word * 8 + (3 - i) * 2;
                b[word * 4 + i] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
            }
        }
        return InetAddress.getByAddress(b);
    }

    /** @return where to connect to reach a socket listening on {@code a}: loopback for a wildcard address */
    public static InetSocketAddress reachable(InetSocketAddress a) {
        if (a.getAddress().isAnyLocalAddress()) {
            return new InetSocketAddress(InetAddress.getLoopbackAddress(), a.getPort());
        }
        return a;
    }
}
