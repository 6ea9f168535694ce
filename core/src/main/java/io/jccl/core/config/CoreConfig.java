package io.jccl.core.config;

import io.jccl.spi.config.EnvVar;

/**
 * The variables of the engine. {@link io.jccl.core.CommConfig#fromEnvironment()} reads them; a
 * {@link io.jccl.core.CommConfig} built in code overrides them per communicator.
 */
public final class CoreConfig {
    private CoreConfig() {
    }

    // ---- Bootstrap

    @EnvVar(defaultValue = "",
            description = "Bootstrap root as host:port, as in NCCL: rank 0 listens there and the other ranks connect "
                    + "to it, so that a launcher needs to pass no unique id. Takes precedence over MASTER_ADDR and "
                    + "MASTER_PORT.")
    public static final String NCCL_COMM_ID = "NCCL_COMM_ID";

    @EnvVar(defaultValue = "",
            description = "Secret that bootstrap connections prove they know when ranks start from launcher "
                    + "variables (a unique id carries its own random secret); jccl run sets a random one. Unset: "
                    + "derived from the root address, which keeps out stray connections but no attacker.")
    public static final String JCCL_COMM_SECRET = "JCCL_COMM_SECRET";

    // ---- Channels and buffers

    @EnvVar(defaultValue = "",
            description = "Fewest channels (rings, each with its own connections and proxy slots) a communicator "
                    + "uses; unset: 1.")
    public static final String NCCL_MIN_NCHANNELS = "NCCL_MIN_NCHANNELS";

    @EnvVar(defaultValue = "",
            description = "Most channels a communicator uses (at most 32); unset: 2 on machines with 4 cores or more, "
                    + "else 1 (one proxy thread drives every channel). Small operations use fewer channels, one per "
                    + "64 KiB.")
    public static final String NCCL_MAX_NCHANNELS = "NCCL_MAX_NCHANNELS";

    @EnvVar(defaultValue = "4194304",
            description = "Bytes of each ring connection's buffer, cut into NCCL_STEPS = 8 slots; one slot is one "
                    + "network message and the largest chunk a ring step moves.")
    public static final String NCCL_BUFFSIZE = "NCCL_BUFFSIZE";

    @EnvVar(defaultValue = "131072",
            description = "Slot size of the connections that send, recv and all-to-all use; each holds 8 slots.")
    public static final String NCCL_P2P_NET_CHUNKSIZE = "NCCL_P2P_NET_CHUNKSIZE";

    // ---- Protocols

    @EnvVar(defaultValue = "",
            description = "Protocols allowed, NCCL's syntax: a comma list of LL, LL128 and Simple, or ^ and the list "
                    + "to exclude. JCCL has two: LL, where a collective small enough (JCCL_LL_THRESHOLD) runs on the "
                    + "calling thread in one step through a shared-memory board or a connection to each rank, and "
                    + "Simple, the ring through the proxy thread; LL128 is accepted and has no effect. Unset: both. "
                    + "Rank 0's value holds for every rank.")
    public static final String NCCL_PROTO = "NCCL_PROTO";

    @EnvVar(defaultValue = "",
            description = "Algorithms allowed, NCCL's syntax: a comma list of Ring, Tree, CollNet (also spelt "
                    + "CollNetChain or CollNetDirect) and JCCL's HalvingDoubling, or ^ and the list to exclude (NCCL's "
                    + "NVLS, NVLSTree and PAT are accepted and have no effect). Unset: the tuner chooses per call "
                    + "between rings, double binary trees (all-reduce, broadcast and reduce of 3 ranks or more, up to "
                    + "the size where rings get faster), CollNet (all-reduce, where NCCL_COLLNET_ENABLE set it up) and "
                    + "halving-doubling (all-reduce of a power of two of ranks from 4, each on a host of its own or all "
                    + "on one host with shared memory off); a collective the allowed ones cannot run goes on rings. "
                    + "Rank 0's value holds for every rank.")
    public static final String NCCL_ALGO = "NCCL_ALGO";

    @EnvVar(defaultValue = "65536",
            description = "Largest contribution (bytes one rank publishes: the buffer of all-reduce, broadcast and "
                    + "reduce, the send buffer of all-gather and of reduce-scatter) that a collective sends with the "
                    + "LL protocol; 0 turns LL off. Through a connection to each rank (ranks on several hosts, or "
                    + "shared memory off), where a rank sends its contribution to every other, the bound is on the "
                    + "bytes it sends: a contribution up to this divided by n - 1; an all-reduce of a power of two of "
                    + "ranks goes by recursive doubling there, up to twice this divided by log2(n). Rank 0's value "
                    + "holds for every rank.")
    public static final String JCCL_LL_THRESHOLD = "JCCL_LL_THRESHOLD";

    @EnvVar(defaultValue = "auto",
            description = "Largest all-reduce (bytes a rank contributes) that ranks all on one host run on the LL "
                    + "protocol's shared-memory board in blocks, beyond JCCL_LL_THRESHOLD: each rank copies its input "
                    + "there, reduces one block of every input and copies every block out, two waits a call instead "
                    + "of a ring's 2(n - 1) steps. auto: 1 MiB where the host has more ranks than cores and NCCL_ALGO "
                    + "is unset (the waits are what costs there), else 0 (off: rings pipeline better on cores of their own); at most "
                    + "4 MiB. Needs LL (NCCL_PROTO) and shared memory. Rank 0's value holds for every rank.")
    public static final String JCCL_BOARD_ALLREDUCE = "JCCL_BOARD_ALLREDUCE";

    // ---- Shared memory between ranks of one host

    @EnvVar(defaultValue = "0",
            description = "1: ranks of the same host connect through the network transport like any other; 0 "
                    + "(default): through shared memory in /dev/shm, as NCCL's SHM transport. Rank 0's value holds "
                    + "for every rank.")
    public static final String NCCL_SHM_DISABLE = "NCCL_SHM_DISABLE";

    @EnvVar(defaultValue = "0",
            description = "1: all-reduce on device buffers between GPUs of one host goes through pinned host staging; "
                    + "0 (default): when every rank is on one host with a GPU of its own and the GPUs reach each other "
                    + "(NVLink or PCIe P2P), each rank's kernel writes into the next GPU's memory through CUDA IPC, as "
                    + "NCCL's P2P transport. Any rank's 1 turns it off for all.")
    public static final String NCCL_P2P_DISABLE = "NCCL_P2P_DISABLE";

    @EnvVar(defaultValue = "0",
            description = "1: ranks on the same GPU also all-reduce device buffers through the P2P ring (within the "
                    + "GPU's memory) rather than pinned host staging. Their kernels wait for each other, so they must "
                    + "run at the same time: threads of one process, or processes under CUDA MPS (without MPS the "
                    + "GPU time-slices processes); for tests and benchmarks on one GPU, not beside other work that "
                    + "fills the GPU. Every such rank must set it.")
    public static final String JCCL_P2P_SHARED_GPU = "JCCL_P2P_SHARED_GPU";

    @EnvVar(defaultValue = "1",
            description = "Collectives on device buffers between hosts (or ranks of different NCCL_HOSTID) but "
                    + "all-to-all: 1 runs NCCL's kernel-and-proxy FIFO: each rank's kernel writes its chunks into "
                    + "slots of pinned host memory and reads the received ones there, the proxy moves the slots "
                    + "through the network transport, the two handing slots over through head and tail counters; "
                    + "0 stages the whole buffer through pinned host memory and runs the host engine on it. "
                    + "Any rank's 0 turns it off for all.")
    public static final String JCCL_NET_FIFO = "JCCL_NET_FIFO";

    @EnvVar(defaultValue = "1",
            description = "Host collectives through the network transport: 1 sends a ring or halving-doubling "
                    + "step whose bytes are final in the user's buffer (the input out of place, or output the step "
                    + "has just written) from that buffer, and receives a ring step that only stores its message "
                    + "(all-gather, broadcast) straight into the output, the buffers registered with each connection "
                    + "once (regMr, a cache of 4 per connection), instead of going through a slot; an operation then "
                    + "completes once its sends from the user's buffers have. 0 moves every step through slots.")
    public static final String JCCL_NET_DIRECT = "JCCL_NET_DIRECT";

    @EnvVar(defaultValue = "0",
            description = "With the network FIFO (JCCL_NET_FIFO=1): 1 puts each rank's FIFO slots in its GPU's memory "
                    + "and hands device pointers to the transport (GPUDirect RDMA: registered as CUDA memory, each "
                    + "receive flushed with iflush before the kernel reads it), where the transport's ptrSupport has "
                    + "CUDA; the counters stay in pinned host memory. 0 keeps the slots in pinned host memory. NCCL "
                    + "decides this by NCCL_NET_GDR_LEVEL and the PCI distance between GPU and NIC; JCCL asks for it, "
                    + "since a transport that copies device memory through the host (JcclSocket) is slower with it.")
    public static final String JCCL_NET_GDR = "JCCL_NET_GDR";

    @EnvVar(defaultValue = "0",
            description = "1 lets all-reduce go through a CollNet transport (in-network reduction, e.g. JcclCollNet) "
                    + "when one has a device and the ranks span 2 hosts or more: a host's ranks reduce into its first "
                    + "rank, which all-reduces with the other hosts' through CollNet (NCCL's CollNetChain); the tuner "
                    + "chooses it per call, NCCL_ALGO can force or exclude it. Rank 0's value holds.")
    public static final String NCCL_COLLNET_ENABLE = "NCCL_COLLNET_ENABLE";

    @EnvVar(defaultValue = "",
            description = "Identity of this rank's host, as in NCCL: ranks with the same value use shared memory "
                    + "with each other. Unset: the host name and the kernel's boot id. Give ranks different values "
                    + "to make them talk through the network on one machine (or from containers that do not share "
                    + "/dev/shm).")
    public static final String NCCL_HOSTID = "NCCL_HOSTID";

    // ---- Failure bounds

    @EnvVar(defaultValue = "600000",
            description = "Bound in milliseconds on every wait for other ranks: init, connection set-up, and any "
                    + "operation that makes no progress for this long fails the communicator, naming the rank it "
                    + "waits for.")
    public static final String JCCL_TIMEOUT_MS = "JCCL_TIMEOUT_MS";

    @EnvVar(defaultValue = "10000",
            description = "Bound in milliseconds on detecting a dead or frozen peer through bootstrap heartbeats; a "
                    + "peer whose process exits is detected at once. Every rank's pending operations then fail "
                    + "naming it.")
    public static final String JCCL_PEER_TIMEOUT_MS = "JCCL_PEER_TIMEOUT_MS";

    // ---- Proxy

    @EnvVar(defaultValue = "backoff",
            description = "What the proxy thread does when a pass found no work while operations are in flight: "
                    + "spin, yield, or backoff (spin briefly, yield, and only after a long wait park for up to 100 us). "
                    + "With nothing in flight it parks until an operation arrives.")
    public static final String JCCL_PROXY_IDLE = "JCCL_PROXY_IDLE";

    @EnvVar(defaultValue = "1",
            description = "1: a thread that waits for an operation (a blocking call, or await on its completion) runs "
                    + "the proxy's duty cycle itself while the proxy thread parks, so that each rank keeps one busy "
                    + "thread and no step waits for a thread switch. 0: only the proxy thread progresses operations.")
    public static final String JCCL_CALLER_PROGRESS = "JCCL_CALLER_PROGRESS";

    // ---- Launchers (Communicator.initFromEnvironment)

    @EnvVar(defaultValue = "",
            description = "Rank of this process, as torchrun sets it; read by Communicator.initFromEnvironment, "
                    + "before OMPI_COMM_WORLD_RANK and SLURM_PROCID.")
    public static final String RANK = "RANK";

    @EnvVar(defaultValue = "",
            description = "Number of ranks, as torchrun sets it (with RANK).")
    public static final String WORLD_SIZE = "WORLD_SIZE";

    @EnvVar(defaultValue = "",
            description = "Host of the bootstrap root (rank 0), as torchrun sets it; used when NCCL_COMM_ID is unset.")
    public static final String MASTER_ADDR = "MASTER_ADDR";

    @EnvVar(defaultValue = "",
            description = "Port of the bootstrap root on MASTER_ADDR.")
    public static final String MASTER_PORT = "MASTER_PORT";

    @EnvVar(defaultValue = "",
            description = "Rank under Open MPI's mpirun (with OMPI_COMM_WORLD_SIZE); the root address still comes "
                    + "from NCCL_COMM_ID or MASTER_ADDR and MASTER_PORT.")
    public static final String OMPI_COMM_WORLD_RANK = "OMPI_COMM_WORLD_RANK";

    @EnvVar(defaultValue = "",
            description = "Number of ranks under Open MPI's mpirun.")
    public static final String OMPI_COMM_WORLD_SIZE = "OMPI_COMM_WORLD_SIZE";

    @EnvVar(defaultValue = "",
            description = "Rank under Slurm's srun (with SLURM_NTASKS); the root address still comes from "
                    + "NCCL_COMM_ID or MASTER_ADDR and MASTER_PORT.")
    public static final String SLURM_PROCID = "SLURM_PROCID";

    @EnvVar(defaultValue = "",
            description = "Number of ranks under Slurm's srun.")
    public static final String SLURM_NTASKS = "SLURM_NTASKS";

    // ---- Read here, declared by the socket transport (one row per variable in the table)

    /** Interfaces the bootstrap may use, with the syntax and defaults of JcclSocket (and NCCL). */
    public static final String SOCKET_IFNAME = "NCCL_SOCKET_IFNAME";
    /** Address family of the bootstrap: AF_INET or AF_INET6. */
    public static final String SOCKET_FAMILY = "NCCL_SOCKET_FAMILY";

    @EnvVar(defaultValue = "auto",
            description = "Host reduction kernel: auto (the Vector API kernel where the JVM has module "
                    + "jdk.incubator.vector, as bin/jccl starts it, else scalar), vector (fail without it) or scalar.")
    public static final String JCCL_HOST_KERNEL = "JCCL_HOST_KERNEL";

    @EnvVar(defaultValue = "auto",
            description = "float16 and bfloat16 reductions on the host: auto (native code, libjccl-halffloats.so, "
                    + "where it loads and the CPU has AVX2 and F16C, with AVX-512 F and BW, then VBMI2, then FP16 "
                    + "where it has those too, unless JCCL_HOST_KERNEL=scalar; else the Java kernel), native (fail "
                    + "without it), avx2 (the native code without AVX-512, a baseline; fail without AVX2), avx512 "
                    + "(without VBMI2 and FP16, the baseline of those; fail without AVX-512 F and BW), avx512_vbmi2 "
                    + "(without FP16; fail without VBMI2) or java. The "
                    + "Vector API has no half-precision conversions: the Java kernels run float16 at a tenth of a "
                    + "memory copy.")
    public static final String JCCL_HOST_HALF_FLOATS = "JCCL_HOST_HALF_FLOATS";

    @EnvVar(defaultValue = "auto",
            description = "Reductions on the host into destinations from this many bytes stream their stores past "
                    + "the caches (non-temporal stores, libjccl-streamstores.so, x86-64): in native loops at AVX-512 "
                    + "or AVX2 for the integer types, float32 and float64, in libjccl-halffloats.so's for float16 and "
                    + "bfloat16, else 16 KiB blocks through a buffer that stays in L1: auto (from 8 MiB where the "
                    + "library loads), off, or a byte count of at least 16K (such as 8M; fail without the library). "
                    + "A reduction larger than the caches otherwise reads each destination line before writing it, "
                    + "which a large copy does not.")
    public static final String JCCL_HOST_STREAM_STORES = "JCCL_HOST_STREAM_STORES";

    @EnvVar(defaultValue = "auto",
            description = "Copies of host memory from 32 KiB: auto (the C library's memmove where it links, else "
                    + "MemorySegment.copy), libc (fail without memmove) or java (always MemorySegment.copy). "
                    + "memmove writes whole cache lines without reading them first, which copies into and out of "
                    + "another rank's shared-memory slots need (HostCopy).")
    public static final String JCCL_HOST_COPY = "JCCL_HOST_COPY";

    @EnvVar(defaultValue = "",
            description = "Path of CUDA's run-time compiler library, which builds JCCL's GPU kernels; unset: "
                    + "libnvrtc.so.13, .12 or .11.2 on the dynamic linker's path, in $CUDA_HOME/lib64 or in "
                    + "/usr/local/cuda*/lib64 and targets/x86_64-linux/lib.")
    public static final String JCCL_NVRTC_LIBRARY = io.jccl.cuda.Nvrtc.JCCL_NVRTC_LIBRARY;

    // ---- Topology

    @EnvVar(defaultValue = "",
            description = "NCCL's topology XML to use instead of reading sysfs (a dump from NCCL_TOPO_DUMP_FILE, "
                    + "JCCL's or NCCL's). It decides which NICs a rank bound to one NUMA node uses.")
    public static final String NCCL_TOPO_FILE = "NCCL_TOPO_FILE";

    @EnvVar(defaultValue = "",
            description = "Where to write the topology a communicator detected, as NCCL's XML (by the rank "
                    + "NCCL_TOPO_DUMP_FILE_RANK names).")
    public static final String NCCL_TOPO_DUMP_FILE = "NCCL_TOPO_DUMP_FILE";

    @EnvVar(defaultValue = "0", description = "The rank that writes NCCL_TOPO_DUMP_FILE.")
    public static final String NCCL_TOPO_DUMP_FILE_RANK = "NCCL_TOPO_DUMP_FILE_RANK";

    /** {@code NCCL_STEPS}: slots per connection. A constant in NCCL too. */
    public static final int NCCL_STEPS = 8;
    /** The most channels a communicator may use. */
    public static final int MAX_CHANNELS = 32;
    /**
     * Channels when neither NCCL_MIN_NCHANNELS nor NCCL_MAX_NCHANNELS says otherwise: one proxy
     * thread drives every channel, and on a machine of 2 cores a second channel only adds messages
     * (measured with 2 and 4 ranks).
     */
    public static final int DEFAULT_CHANNELS = Runtime.getRuntime().availableProcessors() >= 4 ? 2 : 1;
    /** Bytes per channel below which an operation uses fewer channels. */
    public static final long MIN_BYTES_PER_CHANNEL = 64 << 10;
}
