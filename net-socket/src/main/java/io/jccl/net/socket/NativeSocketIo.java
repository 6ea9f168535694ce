package io.jccl.net.socket;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * A control stream's reads and writes as direct calls of the C library's {@code send} and
 * {@code recv} on the channel's file descriptor, through FFM.
 *
 * <p>Why: a small message makes two socket calls on its critical path (the sender's write, the
 * receiver's read), and NIO's {@link SocketChannel} adds its locks, interruptible-I/O bookkeeping and
 * buffer handling to each: on the build machine a 16-byte write took 2.9 us raw (as in C) against
 * 3.4 to 4.4 us through NIO, a read likewise. NCCL's own socket transport makes the bare calls.
 *
 * <p>The channel stays the owner of the descriptor: it opened and configured it and closes it. The
 * comm stops calling here before it closes the channel, under the lock its other callers (the
 * liveness thread's CTS writes) hold, so a descriptor number is never used after the kernel may
 * have given it to another file. Calls pass
 * {@code MSG_DONTWAIT} (never block, whatever the channel's mode) and {@code MSG_NOSIGNAL} (a write
 * to a reset connection is an error, not a SIGPIPE: the shim's JVM runs with {@code -Xrs}, without
 * the JVM's handler that ignores it). Being short and non-blocking, they run as critical downcalls
 * (no thread-state transition).
 *
 * <p>Linux only; {@link #isAvailable()} and {@link #unavailabilityCause()} say whether it runs here.
 */
final class NativeSocketIo {
    private static final int MSG_DONTWAIT = 0x40;
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int FLAGS = MSG_DONTWAIT | MSG_NOSIGNAL;
    private static final int EINTR = 4;
    private static final int EAGAIN = 11;
    private static final int AF_INET = 2;
    private static final int AF_INET6 = 10;

    private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private static final MethodHandle SEND;
    private static final MethodHandle RECV;
    private static final MethodHandle GET_SOCK_NAME;
    private static final MethodHandle GET_PEER_NAME;
    private static final MethodHandle STRERROR;
    private static final MethodHandle SET_SOCK_OPT;
    private static final int SOL_SOCKET = 1;
    private static final int SO_RCVLOWAT = 18;
    private static final Throwable UNAVAILABILITY_CAUSE;

    static {
        MethodHandle send = null;
        MethodHandle recv = null;
        MethodHandle sockName = null;
        MethodHandle peerName = null;
        MethodHandle strerror = null;
        MethodHandle setSockOpt = null;
        Throwable cause = null;
        try {
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
                throw new UnsupportedOperationException("not Linux (" + System.getProperty("os.name") + ")");
            }
            if (!NativeSocketIo.class.getModule().isNativeAccessEnabled()) {
                // Linking would print the JVM's restricted-method warning in a program that never asked for it.
                throw new UnsupportedOperationException("native access is not enabled for JcclSocket (--enable-native-access="
                        + (NativeSocketIo.class.getModule().isNamed() ? NativeSocketIo.class.getModule().getName() : "ALL-UNNAMED")
                        + ")");
            }
            Linker linker = Linker.nativeLinker();
            // ssize_t send(int fd, const void* buf, size_t len, int flags), recv likewise; the buffer
            // as a plain address, so that a call makes no segment.
            FunctionDescriptor io = FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);
            send = linker.downcallHandle(symbol(linker, "send"), io, Linker.Option.captureCallState("errno"),
                    Linker.Option.critical(false));
            recv = linker.downcallHandle(symbol(linker, "recv"), io, Linker.Option.captureCallState("errno"),
                    Linker.Option.critical(false));
            FunctionDescriptor name = FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.ADDRESS);
            sockName = linker.downcallHandle(symbol(linker, "getsockname"), name);
            peerName = linker.downcallHandle(symbol(linker, "getpeername"), name);
            // int setsockopt(int fd, int level, int name, const void* value, socklen_t length)
            setSockOpt = linker.downcallHandle(symbol(linker, "setsockopt"), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            strerror = linker.downcallHandle(symbol(linker, "strerror"),
                    FunctionDescriptor.of(ValueLayout.ADDRESS.withTargetLayout(MemoryLayout.sequenceLayout(256, ValueLayout.JAVA_BYTE)),
                            ValueLayout.JAVA_INT));
        } catch (Throwable t) {
            cause = t;
            send = recv = sockName = peerName = strerror = setSockOpt = null;
        }
        SEND = send;
        RECV = recv;
        GET_SOCK_NAME = sockName;
        GET_PEER_NAME = peerName;
        STRERROR = strerror;
        SET_SOCK_OPT = setSockOpt;
        UNAVAILABILITY_CAUSE = cause;
    }

    private static MemorySegment symbol(Linker linker, String name) {
        return linker.defaultLookup().find(name)
                .orElseThrow(() -> new UnsupportedOperationException("the C library has no " + name + "()"));
    }

    private final int fd;
    /**
     * errno of the last call: the comm calls from one thread at a time (its caller, or the
     * liveness thread under the comm's lock), so one segment serves both directions.
     */
    private final MemorySegment callState = Arena.ofAuto().allocate(CALL_STATE);

    /** The value of an option being set. */
    private final MemorySegment optionValue = Arena.ofAuto().allocate(ValueLayout.JAVA_INT);

    private NativeSocketIo(int fd) {
        this.fd = fd;
    }

    /**
     * Sets the socket's receive low-water mark: poll and select report it readable only once that
     * many bytes are there (non-blocking reads still return what is there). The kernel caps it at
     * half the receive buffer it may grow to.
     *
     * @return whether it was set
     */
    boolean receiveLowWater(int bytes) {
        optionValue.set(ValueLayout.JAVA_INT, 0, bytes);
        try {
            return (int) SET_SOCK_OPT.invokeExact(fd, SOL_SOCKET, SO_RCVLOWAT, optionValue.address(), 4) == 0;
        } catch (Throwable t) {
            return false;
        }
    }

    /** @return whether direct socket calls work in this JVM */
    static boolean isAvailable() {
        return UNAVAILABILITY_CAUSE == null;
    }

    /** @return why not, or null when {@link #isAvailable()} */
    static Throwable unavailabilityCause() {
        return UNAVAILABILITY_CAUSE;
    }

    /**
     * @param channel a connected channel
     * @return direct calls on its descriptor, or null where that descriptor cannot be found (then
     *         the channel's own calls are used)
     */
    static NativeSocketIo of(SocketChannel channel) {
        if (!isAvailable()) {
            return null;
        }
        int fd = descriptorOf(channel);
        return fd < 0 ? null : new NativeSocketIo(fd);
    }

    /** @return the descriptor */
    int fd() {
        return fd;
    }

    /**
     * Writes what the socket takes now.
     *
     * @param address the first byte
     * @return bytes written, 0 if the socket's buffer is full
     * @throws IOException the connection failed (reset, broken pipe), with the C library's words
     */
    long write(long address, long length) throws IOException {
        long n = call(SEND, "send", address, length);
        return n == WOULD_BLOCK ? 0 : n;
    }

    /**
     * Reads what the socket has now.
     *
     * @param address where to put it
     * @return bytes read, 0 if none are there, -1 when the peer closed the connection
     * @throws IOException the connection failed, with the C library's words
     */
    long read(long address, long length) throws IOException {
        long n = call(RECV, "recv", address, length);
        if (n == WOULD_BLOCK) {
            return 0;
        }
        return n == 0 && length > 0 ? -1 : n;
    }

    /** {@link #call}'s answer when the socket would block (EAGAIN). */
    private static final long WOULD_BLOCK = -1;

    /** @return what send or recv returned, retried on EINTR, or {@link #WOULD_BLOCK} */
    private long call(MethodHandle function, String name, long address, long length) throws IOException {
        while (true) {
            long n;
            try {
                n = (long) function.invokeExact(callState, fd, address, length, FLAGS);
            } catch (Throwable t) {
                throw new IOException(name + "(): " + t, t);
            }
            if (n >= 0) {
                return n;
            }
            int errno = (int) ERRNO.get(callState, 0L);
            if (errno == EAGAIN) {
                return WOULD_BLOCK;
            }
            if (errno != EINTR) {
                throw new IOException(describe(errno));
            }
        }
    }

    private static String describe(int errno) {
        try {
            MemorySegment text = (MemorySegment) STRERROR.invokeExact(errno);
            return text.getString(0);
        } catch (Throwable t) {
            return "errno " + errno;
        }
    }

    /**
     * Finds the channel's descriptor among the process's open ones: the socket whose local and
     * remote addresses are the channel's (a TCP connection's four values are unique in a host).
     * Newest descriptors first, since the channel was just made. Runs once per connection.
     *
     * @return the descriptor, or -1 if none matches
     */
    static int descriptorOf(SocketChannel channel) {
        InetSocketAddress local;
        InetSocketAddress remote;
        try {
            local = (InetSocketAddress) channel.getLocalAddress();
            remote = (InetSocketAddress) channel.getRemoteAddress();
        } catch (IOException | ClassCastException e) {
            return -1;
        }
        if (local == null || remote == null) {
            return -1;
        }
        int[] fds;
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            int[] found = new int[64];
            int count = 0;
            for (Path p : dir) {
                try {
                    int fd = Integer.parseInt(p.getFileName().toString());
                    if (count == found.length) {
                        found = Arrays.copyOf(found, count * 2);
                    }
                    found[count++] = fd;
                } catch (NumberFormatException e) {
                    // not a descriptor
                }
            }
            fds = Arrays.copyOf(found, count);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        Arrays.sort(fds);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment address = arena.allocate(128);
            MemorySegment length = arena.allocate(ValueLayout.JAVA_INT);
            for (int i = fds.length - 1; i >= 0; i--) {
                if (matches(GET_SOCK_NAME, fds[i], local, address, length)
                        && matches(GET_PEER_NAME, fds[i], remote, address, length)) {
                    return fds[i];
                }
            }
        }
        return -1;
    }

    /** @return whether getsockname/getpeername ({@code call}) of {@code fd} gives {@code expected} */
    private static boolean matches(MethodHandle call, int fd, InetSocketAddress expected, MemorySegment address,
                                   MemorySegment length) {
        length.set(ValueLayout.JAVA_INT, 0, (int) address.byteSize());
        try {
            if ((int) call.invokeExact(fd, address, length) != 0) {
                return false; // closed meanwhile, or not a socket
            }
        } catch (Throwable t) {
            return false;
        }
        int family = Short.toUnsignedInt(address.get(ValueLayout.JAVA_SHORT, 0));
        int port = (Byte.toUnsignedInt(address.get(ValueLayout.JAVA_BYTE, 2)) << 8)
                | Byte.toUnsignedInt(address.get(ValueLayout.JAVA_BYTE, 3));
        if (port != expected.getPort()) {
            return false;
        }
        byte[] bytes;
        if (family == AF_INET) {
            bytes = address.asSlice(4, 4).toArray(ValueLayout.JAVA_BYTE);
        } else if (family == AF_INET6) {
            bytes = address.asSlice(8, 16).toArray(ValueLayout.JAVA_BYTE);
        } else {
            return false;
        }
        return sameAddress(bytes, expected.getAddress());
    }

    /** An IPv4 address on a dual-stack socket is IPv4-mapped (::ffff:a.b.c.d) in the kernel's view. */
    static boolean sameAddress(byte[] kernel, InetAddress java) {
        byte[] want = java.getAddress();
        if (kernel.length == want.length) {
            return Arrays.equals(kernel, want);
        }
        if (kernel.length == 16 && java instanceof Inet4Address) {
            for (int i = 0; i < 10; i++) {
                if (kernel[i] != 0) {
                    return false;
                }
            }
            return kernel[10] == (byte) 0xff && kernel[11] == (byte) 0xff
                    && Arrays.equals(Arrays.copyOfRange(kernel, 12, 16), want);
        }
        return false;
    }
}
