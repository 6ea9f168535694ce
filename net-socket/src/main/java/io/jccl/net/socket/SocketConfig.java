package io.jccl.net.socket;

import io.jccl.spi.config.Env;
import io.jccl.spi.config.InterfaceFilter;
import io.jccl.spi.config.EnvVar;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Every variable JcclSocket reads, and the settings parsed from them. NCCL's names are used where
 * NCCL's socket transport has the same knob.
 */
public final class SocketConfig {
    private SocketConfig() {
    }

    /** Interfaces JcclSocket uses: declared with the SPI, shared with the other TCP transports. */
    public static final String NCCL_SOCKET_IFNAME = InterfaceFilter.NCCL_SOCKET_IFNAME;

    @EnvVar(defaultValue = "",
            description = "Address family of JcclSocket devices: AF_INET or AF_INET6; unset: IPv4 preferred, IPv6 "
                    + "when an interface has no IPv4 address.")
    public static final String NCCL_SOCKET_FAMILY = "NCCL_SOCKET_FAMILY";

    @EnvVar(defaultValue = "auto",
            description = "I/O threads per JcclSocket connection (0 to 16); 0 moves all data on the control stream "
                    + "in the caller of test(). auto: 0 on machines with fewer than 8 cores, 2 with 8 to 15, 4 from 16 cores up; "
                    + "a process bound to fewer cores than the machine has online (mpirun, taskset) gets at least 2.")
    public static final String NCCL_SOCKET_NTHREADS = "NCCL_SOCKET_NTHREADS";

    @EnvVar(defaultValue = "auto",
            description = "Data streams (TCP connections) per I/O thread; threads x streams is capped at 64. "
                    + "auto: 1, or 2 when a bound process gets 2 I/O threads.")
    public static final String NCCL_NSOCKS_PERTHREAD = "NCCL_NSOCKS_PERTHREAD";

    // 16 KiB with I/O threads: a message the sending thread writes itself skips two thread hand-offs
    // (the I/O threads' wake-ups), which cost more than the copy up to tens of KiB (device all-reduce
    // at 4 KiB through the network FIFO on an H200: 102 us at 1 KiB, 41 us at 16 KiB).
    // 64 KiB and 64 bytes (room for the engine's own header) without: every payload then goes on
    // the control stream anyway, and an inline one is one write and one read where a payload after
    // its frame is two of each (2-rank all-reduce over loopback TCP on the 2-core build machine:
    // 32 KiB 28 us against 37-79, 128 KiB 108-125 us against 144-242).
    @EnvVar(defaultValue = "auto",
            description = "Messages up to this many bytes travel inline on the control stream, copied once, "
                    + "without the I/O threads' hand-off. auto: 16384 on a connection with I/O threads, 65600 "
                    + "(the most: 64 KiB and a 64-byte header) on one without.")
    public static final String NCCL_SOCKET_INLINE = "NCCL_SOCKET_INLINE";

    @EnvVar(defaultValue = "65536",
            description = "Smallest chunk a message is cut into when it is striped over the data streams.")
    public static final String NCCL_SOCKET_MIN_TASKSIZE = "NCCL_SOCKET_MIN_TASKSIZE";

    @EnvVar(defaultValue = "",
            description = "SO_SNDBUF of JcclSocket connections in bytes; unset: the kernel's autotuning.")
    public static final String NCCL_SOCKET_SNDBUF = "NCCL_SOCKET_SNDBUF";

    // auto: 1 MiB on a host with more ranks than cores. There a sender with the kernel's autotuned
    // window (up to tcp_rmem's 32 MiB) writes a whole round into a peer that is off its core, and the
    // peer later copies it out of cache; a 1 MiB buffer makes the sender wait and yield the core to
    // it. 4 ranks through TCP on the 2-core build machine, 4 MiB all-reduce: 4.4 to 5.5 ms against
    // 5.7 to 6.4 (eight rounds, all of them faster); 2 ranks on 2 cores and 2 ranks on 16 cores under
    // NCCL were not faster with it (all_reduce 0.66x to 0.87x from 16 to 512 MiB, sendrecv level),
    // so there it stays the kernel's.
    @EnvVar(defaultValue = "auto",
            description = "SO_RCVBUF of JcclSocket connections in bytes, 0 for the kernel's autotuning. auto: "
                    + "1048576 where the host runs more ranks than it has online cores (LOCAL_WORLD_SIZE, "
                    + "OMPI_COMM_WORLD_LOCAL_SIZE or MPI_LOCALNRANKS), else the kernel's autotuning.")
    public static final String NCCL_SOCKET_RCVBUF = "NCCL_SOCKET_RCVBUF";

    /** The receive buffer of {@code NCCL_SOCKET_RCVBUF=auto} on a host with more ranks than cores. */
    static final int OVERSUBSCRIBED_RECEIVE_BUFFER = 1 << 20;

    /** Launchers' variables for the ranks on this host, in the order read: torchrun and jccl, Open MPI, MPICH. */
    static final List<String> LOCAL_RANK_COUNT_VARIABLES =
            List.of("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS");

    @EnvVar(defaultValue = "34",
            description = "Times JcclSocket retries a refused or unreachable connect before it fails (within "
                    + "JCCL_SOCKET_CONNECT_TIMEOUT_MS in all).")
    public static final String NCCL_SOCKET_RETRY_CNT = "NCCL_SOCKET_RETRY_CNT";

    @EnvVar(defaultValue = "100",
            description = "Milliseconds before the first connect retry; the n-th retry waits n times as long.")
    public static final String NCCL_SOCKET_RETRY_SLEEP_MSEC = "NCCL_SOCKET_RETRY_SLEEP_MSEC";

    @EnvVar(defaultValue = "15000",
            description = "Bound in milliseconds on detecting a dead, frozen, unreachable or stuck JcclSocket peer: "
                    + "every comm sends a heartbeat each second (each fifth of a shorter bound), and pending requests "
                    + "fail once the peer has been silent, or has taken or sent none of a started message, for this "
                    + "long; a peer that exits fails them at once. A request that waits longer with its peer alive (and "
                    + "nothing of it started) does not fail: the comm logs its state once at INFO.")
    public static final String JCCL_SOCKET_TIMEOUT_MS = "JCCL_SOCKET_TIMEOUT_MS";

    @EnvVar(defaultValue = "5000",
            description = "Bound in milliseconds on a JcclSocket connection's set-up: connect retries a refused or "
                    + "unanswered connect (NCCL_SOCKET_RETRY_CNT) for at most this long in all, and a listener drops a "
                    + "socket that has not presented its handshake within it.")
    public static final String JCCL_SOCKET_CONNECT_TIMEOUT_MS = "JCCL_SOCKET_CONNECT_TIMEOUT_MS";

    @EnvVar(defaultValue = "1",
            description = "1: where a CUDA driver is present, JcclSocket reports CUDA pointer support (ptrSupport "
                    + "HOST and CUDA) and takes device memory, staged through a pinned host mirror by the GPU's copy "
                    + "engines, for a program that registers device memory through the SPI. Under NCCL the shim passes this on only with "
                    + "JCCL_SHIM_GDR=1. 0: host memory only.")
    public static final String JCCL_SOCKET_CUDA = "JCCL_SOCKET_CUDA";

    @EnvVar(defaultValue = "0",
            description = "Microseconds an I/O thread keeps polling its data streams after it last moved a byte, "
                    + "before it blocks in its selector or parks: a thread that blocks must be woken (a futex wake "
                    + "and a scheduler pass, slow from a deep idle state) at the next message. 0: a few hundred polls only.")
    public static final String JCCL_SOCKET_SPIN_US = "JCCL_SOCKET_SPIN_US";

    @EnvVar(defaultValue = "200",
            description = "Microseconds an I/O thread may go without a turn of its duty cycle while runnable (no core "
                    + "free: more polling threads than cores) before the comm's caller, polling test(), moves its bytes "
                    + "itself. 0: never; the caller then leaves every byte of the data streams to the I/O threads. Under NCCL "
                    + "the shim makes it 0 unless set (NCCL's one proxy thread serves every connection).")
    public static final String JCCL_SOCKET_HELP_US = "JCCL_SOCKET_HELP_US";

    @EnvVar(defaultValue = "auto",
            description = "I/O threads of all JcclSocket connections of a process together; a connection gets a fair "
                    + "share when it is made, at least 1. auto: a quarter of the usable cores while NCCL_SOCKET_NTHREADS "
                    + "is auto, no bound when NCCL_SOCKET_NTHREADS is set; 0: no bound. Under NCCL the shim makes it 0 "
                    + "unless set (NCCL's per-connection threads).")
    public static final String JCCL_SOCKET_IO_THREADS = "JCCL_SOCKET_IO_THREADS";

    @EnvVar(defaultValue = "",
            description = "Most I/O threads per connection that the automatic layout (NCCL_SOCKET_NTHREADS unset) "
                    + "gives, at least 1; unset: no cap. Under NCCL the shim makes it 1 unless set: NCCL opens a "
                    + "connection per channel and direction; with 8 channels on 16 cores one thread each moved sendrecv "
                    + "faster than 4 each in 31 of 32 rows (16-512 MiB, 0.89-1.75x) and all_reduce 16-64 MiB in 15 of 18, "
                    + "slower from 128 MiB (0.73-0.97x from 256 MiB).")
    public static final String JCCL_SOCKET_AUTO_THREADS_MAX = "JCCL_SOCKET_AUTO_THREADS_MAX";

    @EnvVar(defaultValue = "1",
            description = "1: a connection's control stream (frames and inline payloads, every small message) is read "
                    + "and written with direct calls of the C library's send and recv on its socket, through FFM, where "
                    + "native access is enabled on Linux; NIO's SocketChannel adds 0.4 to 1.5 us per call. 0: NIO only. "
                    + "Data streams (large messages) use NIO either way.")
    public static final String JCCL_SOCKET_NATIVE_IO = "JCCL_SOCKET_NATIVE_IO";

    @EnvVar(defaultValue = "1",
            description = "1: an I/O thread whose data stream waits for the rest of a chunk, 256 KiB or more, sets "
                    + "the socket's SO_RCVLOWAT to it (at most 1 MiB) and sleeps in its selector until that much has "
                    + "arrived, instead of polling the socket with reads, each of which takes the socket's lock from "
                    + "the sender's incoming segments (a 512 KiB chunk under NCCL took 54 empty reads). Needs direct "
                    + "socket calls (JCCL_SOCKET_NATIVE_IO). 0: poll.")
    public static final String JCCL_SOCKET_LOW_WATER = "JCCL_SOCKET_LOW_WATER";

    /** The inline limit of a connection with I/O threads, unless NCCL_SOCKET_INLINE says otherwise. */
    static final int DEFAULT_INLINE = 16 << 10;
    /** The most I/O threads per connection, as in NCCL. */
    static final int MAX_THREADS = 16;
    /** The most data streams per connection, as in NCCL. */
    static final int MAX_STREAMS = 64;

    /**
     * Parsed settings.
     *
     * @param interfaces     the {@code NCCL_SOCKET_IFNAME} value, or null
     * @param family         4, 6, or 0 for either
     * @param threads        I/O threads per connection
     * @param streamsPerThread data streams per I/O thread
     * @param inlineBytes    largest inline message on a connection with data streams
     * @param inlineAuto     whether NCCL_SOCKET_INLINE is left to JcclSocket ({@link #inlineBytes(int)})
     * @param minChunkBytes  smallest striping chunk
     * @param sendBuffer     SO_SNDBUF, or 0 for the kernel's default
     * @param receiveBuffer  SO_RCVBUF, or 0 for the kernel's default
     * @param retries        connect retries
     * @param retrySleepMs   first connect retry delay
     * @param timeout        failure-detection bound
     * @param connectTimeout connection set-up bound
     * @param layoutReason   why the stream layout is what it is, for the log
     * @param spinNanos      how long an idle I/O thread polls before it blocks
     * @param helpAfterNanos how long an I/O thread may be starved before a polling caller moves its
     *                       bytes, 0 for never ({@code JCCL_SOCKET_HELP_US})
     * @param ioThreadLimit  I/O threads of all comms of the process together, 0 for no bound
     * @param nativeIo       whether control streams use direct socket calls where available
     *                       ({@code JCCL_SOCKET_NATIVE_IO})
     * @param lowWater       whether a receiving I/O thread waits for the rest of a chunk with
     *                       SO_RCVLOWAT rather than polling ({@code JCCL_SOCKET_LOW_WATER})
     */
    record Settings(String interfaces, int family, int threads, int streamsPerThread, int inlineBytes,
                    boolean inlineAuto, int minChunkBytes, int sendBuffer, int receiveBuffer, int retries, int retrySleepMs,
                    Duration timeout, Duration connectTimeout, String layoutReason, long spinNanos, long helpAfterNanos,
                    int ioThreadLimit, boolean nativeIo, boolean lowWater) {

        /**
         * @return how often every comm sends a heartbeat on its liveness socket: every second, or
         *         five times within a bound shorter than 5 s, so that a live peer is never silent
         *         for most of the bound
         */
        Duration heartbeatInterval() {
            return timeout.dividedBy(5).compareTo(Duration.ofSeconds(1)) < 0 ? timeout.dividedBy(5) : Duration.ofSeconds(1);
        }

        /**
         * @param dataStreams data streams of the connection
         * @return the largest inline message on it: all payloads of a connection without data streams
         *         go on its control stream, where inline saves a write and a read per message
         */
        int inlineBytes(int dataStreams) {
            return inlineAuto && dataStreams == 0 ? Wire.MAX_INLINE : inlineBytes;
        }

        /** @return data streams per connection: threads x streams per thread, capped at {@value #MAX_STREAMS} */
        int streams() {
            return threads == 0 ? 0 : Math.min(MAX_STREAMS, threads * streamsPerThread);
        }

        /** @return these settings with the stream layout a listener chose, which both ends must share */
        Settings withLayout(int newThreads, int newStreams, int newMinChunkBytes) {
            return new Settings(interfaces, family, newThreads, newThreads == 0 ? 1 : (newStreams + newThreads - 1) / newThreads,
                    inlineBytes, inlineAuto, newMinChunkBytes, sendBuffer, receiveBuffer, retries, retrySleepMs, timeout,
                    connectTimeout, "chosen by the listener", spinNanos, helpAfterNanos, ioThreadLimit, nativeIo, lowWater);
        }
    }

    /**
     * @return the settings from the environment
     * @throws IllegalArgumentException naming the variable if a value is malformed or out of range
     */
    static Settings fromEnvironment() {
        int online = onlineCpus();
        Layout auto = capped(autoLayout(online, Runtime.getRuntime().availableProcessors()),
                positive(JCCL_SOCKET_AUTO_THREADS_MAX, Env.getInt(JCCL_SOCKET_AUTO_THREADS_MAX, MAX_THREADS), 1,
                        MAX_THREADS));
        boolean threadsAuto = isAuto(NCCL_SOCKET_NTHREADS);
        int threads = threadsAuto ? auto.threads() : Env.getInt(NCCL_SOCKET_NTHREADS, auto.threads());
        if (threads < 0 || threads > MAX_THREADS) {
            throw new IllegalArgumentException(NCCL_SOCKET_NTHREADS + "=" + threads + " is outside 0.." + MAX_THREADS);
        }
        boolean perThreadAuto = isAuto(NCCL_NSOCKS_PERTHREAD);
        int perThread = !perThreadAuto ? Env.getInt(NCCL_NSOCKS_PERTHREAD, 1) : threadsAuto ? auto.streamsPerThread() : 1;
        if (perThread < 1 || perThread > MAX_STREAMS) {
            throw new IllegalArgumentException(NCCL_NSOCKS_PERTHREAD + "=" + perThread + " is outside 1.." + MAX_STREAMS);
        }
        if (threads > 0 && threads * perThread > MAX_STREAMS) {
            perThread = MAX_STREAMS / threads;
        }
        String why = threadsAuto && perThreadAuto ? "auto: " + auto.reason()
                : threadsAuto ? "set by " + NCCL_NSOCKS_PERTHREAD
                : perThreadAuto ? "set by " + NCCL_SOCKET_NTHREADS
                : "set by " + NCCL_SOCKET_NTHREADS + " and " + NCCL_NSOCKS_PERTHREAD;
        boolean inlineAuto = isAuto(NCCL_SOCKET_INLINE);
        int inline = inlineAuto ? DEFAULT_INLINE
                : bytes(NCCL_SOCKET_INLINE, DEFAULT_INLINE, 0, Wire.MAX_INLINE);
        int minChunk = bytes(NCCL_SOCKET_MIN_TASKSIZE, 64 << 10, 4096, 1 << 30);
        long timeoutMs = Env.getLong(JCCL_SOCKET_TIMEOUT_MS, 15_000);
        if (timeoutMs < 100) {
            throw new IllegalArgumentException(JCCL_SOCKET_TIMEOUT_MS + "=" + timeoutMs + " is below 100");
        }
        // A refused connect means that no listener is there; a pause of the peer does not refuse
        // connections (its kernel accepts them), so set-up keeps its own, shorter bound.
        long connectTimeoutMs = Env.getLong(JCCL_SOCKET_CONNECT_TIMEOUT_MS, 5000);
        if (connectTimeoutMs < 100) {
            throw new IllegalArgumentException(JCCL_SOCKET_CONNECT_TIMEOUT_MS + "=" + connectTimeoutMs + " is below 100");
        }
        return new Settings(Env.get(NCCL_SOCKET_IFNAME), InterfaceFilter.family(Env.get(NCCL_SOCKET_FAMILY)), threads, perThread,
                inline, inlineAuto, minChunk, bytes(NCCL_SOCKET_SNDBUF, 0, 0, Integer.MAX_VALUE),
                isAuto(NCCL_SOCKET_RCVBUF) ? autoReceiveBuffer(localRanks(), online)
                        : bytes(NCCL_SOCKET_RCVBUF, 0, 0, Integer.MAX_VALUE),
                Math.max(0, Env.getInt(NCCL_SOCKET_RETRY_CNT, 34)), Math.max(1, Env.getInt(NCCL_SOCKET_RETRY_SLEEP_MSEC, 100)),
                Duration.ofMillis(timeoutMs), Duration.ofMillis(connectTimeoutMs), why,
                TimeUnit.MICROSECONDS.toNanos(positive(JCCL_SOCKET_SPIN_US, Env.getInt(JCCL_SOCKET_SPIN_US, 0), 0, 1_000_000)),
                TimeUnit.MICROSECONDS.toNanos(positive(JCCL_SOCKET_HELP_US, Env.getInt(JCCL_SOCKET_HELP_US, 200), 0, 1_000_000)),
                ioThreadLimit(threadsAuto, Runtime.getRuntime().availableProcessors()),
                positive(JCCL_SOCKET_NATIVE_IO, Env.getInt(JCCL_SOCKET_NATIVE_IO, 1), 0, 1) == 1,
                positive(JCCL_SOCKET_LOW_WATER, Env.getInt(JCCL_SOCKET_LOW_WATER, 1), 0, 1) == 1);
    }

    /**
     * @param threadsAuto whether NCCL_SOCKET_NTHREADS is left to JcclSocket
     * @param usable      the CPUs this process may run on
     * @return the bound on the I/O threads of all comms of the process: {@code JCCL_SOCKET_IO_THREADS}
     *         if set, else a quarter of the usable cores (other ranks of the host share them) while the
     *         layout is automatic, and none when NCCL_SOCKET_NTHREADS sets the threads per comm
     */
    static int ioThreadLimit(boolean threadsAuto, int usable) {
        String v = Env.get(JCCL_SOCKET_IO_THREADS);
        if (v != null && !v.equalsIgnoreCase("auto")) {
            return positive(JCCL_SOCKET_IO_THREADS, Env.getInt(JCCL_SOCKET_IO_THREADS, 0), 0, 4096);
        }
        return threadsAuto ? Math.max(1, usable / 4) : 0;
    }

    /**
     * @param localRanks the ranks on this host as the launcher says, 0 where it says nothing
     * @param online     the machine's online cores
     * @return SO_RCVBUF for {@code NCCL_SOCKET_RCVBUF=auto}: {@value #OVERSUBSCRIBED_RECEIVE_BUFFER}
     *         where the ranks outnumber the cores, else 0 (the kernel's autotuning)
     */
    static int autoReceiveBuffer(int localRanks, int online) {
        return localRanks > online ? OVERSUBSCRIBED_RECEIVE_BUFFER : 0;
    }

    /** @return the ranks on this host from the first launcher variable set to a positive count, else 0 */
    static int localRanks() {
        for (String name : LOCAL_RANK_COUNT_VARIABLES) {
            String v = Env.get(name);
            if (v != null) {
                try {
                    int n = Integer.parseInt(v.trim());
                    if (n > 0) {
                        return n;
                    }
                } catch (NumberFormatException e) {
                    // a launcher's variable, not ours to reject: the next one, or no count
                }
            }
        }
        return 0;
    }

    private static boolean isAuto(String name) {
        String v = Env.get(name);
        return v == null || v.equalsIgnoreCase("auto") || v.equals("-2");
    }

    /**
     * An automatic stream layout and why it was chosen, for the log.
     *
     * @param threads          I/O threads per connection
     * @param streamsPerThread data streams per I/O thread
     * @param reason           one phrase for the INFO line
     */
    record Layout(int threads, int streamsPerThread, String reason) {
    }

    /** @return {@code auto} with at most {@code maxThreads} I/O threads (JCCL_SOCKET_AUTO_THREADS_MAX) */
    static Layout capped(Layout auto, int maxThreads) {
        if (auto.threads() <= maxThreads) {
            return auto;
        }
        return new Layout(maxThreads, auto.streamsPerThread(), auto.reason() + ", at most " + maxThreads
                + " per connection (" + JCCL_SOCKET_AUTO_THREADS_MAX + ")");
    }

    /**
     * The automatic layout (measured, net-socket/README.md "Stream layout defaults"). With every
     * core of the machine usable: on fewer than 8 cores the caller's thread alone is fastest; on a
     * 16-core host 4 threads of 1 stream beat 2 threads by 1.8x at 64 MiB. Under a CPU binding
     * (mpirun's one core per rank, taskset, a cpuset, a container's CPU quota), the threads of a
     * rank share its cores:
     * there a caller that polls {@code test()} starves the thread that has data to move for whole
     * scheduler slices, and I/O threads, which back off and park when idle, share the core far
     * better (2 to 4 times the throughput of the caller alone on one bound core).
     *
     * @param online the machine's online CPUs
     * @param usable the CPUs this process may run on (affinity mask, container quota)
     */
    static Layout autoLayout(int online, int usable) {
        int machine = online < 8 ? 0 : online < 16 ? 2 : 4;
        if (usable >= online) {
            return new Layout(machine, 1, machine == 0
                    ? online + " cores: the caller of test() moves the data, as it is fastest below 8 cores"
                    : online + " cores: " + machine + " I/O threads");
        }
        int threads = Math.max(2, machine);
        int perThread = threads == 2 ? 2 : 1;
        return new Layout(threads, perThread, "bound to " + usable + " of " + online + " online cores (a launcher's "
                + "binding, a cpuset or a CPU quota): I/O threads that park when idle share the bound cores better than a caller "
                + "polling test()");
    }

    /**
     * @return the machine's online CPUs ({@code /sys/devices/system/cpu/online}), or the usable ones
     *         where that file cannot be read
     */
    static int onlineCpus() {
        try {
            return countCpuList(Files.readString(Path.of("/sys/devices/system/cpu/online")).trim());
        } catch (IOException | RuntimeException e) {
            return Runtime.getRuntime().availableProcessors();
        }
    }

    /**
     * @param list a kernel CPU list such as {@code 0-3,8-11} or {@code 0}
     * @return how many CPUs it names
     */
    static int countCpuList(String list) {
        int n = 0;
        for (String range : list.split(",")) {
            int dash = range.indexOf('-');
            n += dash < 0 ? 1 : Integer.parseInt(range.substring(dash + 1).trim())
                    - Integer.parseInt(range.substring(0, dash).trim()) + 1;
        }
        return n;
    }

    /** A size variable within [min, max], checked before it is narrowed to an int (4G would wrap). */
    private static int bytes(String name, int defaultValue, int min, int max) {
        long value = Env.getBytes(name, defaultValue);
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + "=" + value + " is outside " + min + ".." + max);
        }
        return (int) value;
    }

    private static int positive(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + "=" + value + " is outside " + min + ".." + max);
        }
        return value;
    }
}
