package io.jccl.shim;

import io.jccl.spi.config.EnvVar;

/**
 * The variables of the native shim {@code libnccl-net.so}. Its C half reads them (a test checks
 * that it reads each of these names); {@code JCCL_JAVA_HOME} is shared with {@code bin/jccl} and
 * declared there.
 */
public final class ShimConfig {
    private ShimConfig() {
    }

    @EnvVar(defaultValue = "",
            description = "Java transport that the native shim (libnccl-net.so) runs under NCCL; unset: NCCL_NET "
                    + "unless it names NCCL's IB or Socket, else JCCL_SHIM_NET of the package file beside the library "
                    + "(jccl package), else JcclSocket. NCCL_NET must then name it too, or be unset.")
    public static final String JCCL_SHIM_NET = "JCCL_SHIM_NET";

    @EnvVar(defaultValue = "",
            description = "Java CollNet transport that the native shim exports as ncclCollNet; unset: none (the shim "
                    + "reports no CollNet device and NCCL runs without CollNet).")
    public static final String JCCL_SHIM_COLLNET = "JCCL_SHIM_COLLNET";

    @EnvVar(defaultValue = "",
            description = "Class path of the JVM that the native shim starts, or of the class loader it adds to a "
                    + "running JVM that lacks JCCL; an entry DIR/* means the jars in DIR. Unset: the jars beside the "
                    + "shim library.")
    public static final String JCCL_SHIM_CLASSPATH = "JCCL_SHIM_CLASSPATH";

    @EnvVar(defaultValue = "12",
            description = "Newest ncclNet/ncclCollNet version (6 to 12) the native shim exports; NCCL takes the "
                    + "newest it knows, so 6 makes any NCCL 2.13 or later use v6.")
    public static final String JCCL_SHIM_MAX_API_VERSION = "JCCL_SHIM_MAX_API_VERSION";

    @EnvVar(defaultValue = "",
            description = "Extra options, space-separated, of the JVM that the native shim starts (e.g. -Xmx2g); it "
                    + "always adds --enable-native-access=ALL-UNNAMED and -Xrs, and before them -XX:CICompilerCount=2 "
                    + "-XX:-UseDynamicNumberOfCompilerThreads -XX:+UseSerialGC (a guest in the host process keeps a "
                    + "small, fixed set of threads); naming a collector (-XX:+Use...GC) replaces the serial one.")
    public static final String JCCL_SHIM_JVM_OPTS = "JCCL_SHIM_JVM_OPTS";

    @EnvVar(defaultValue = "",
            description = "JDK 25's AOT cache for the JVM that the native shim starts (classes loaded and linked, method "
                    + "profiles of a training run; with it the JIT compiles the data path at its first calls, so NCCL's "
                    + "first messages meet less cold code). Unset: jccl-shim.aot beside the library, used when it exists; "
                    + "a file named here must exist. "
                    + "off: none. Written by a run with JCCL_SHIM_AOT_TRAIN=1, with the jars it was trained on in "
                    + "FILE.classpath: a cache whose jars changed since is not used (one WARN line).")
    public static final String JCCL_SHIM_AOT_CACHE = "JCCL_SHIM_AOT_CACHE";

    @EnvVar(defaultValue = "0",
            description = "1: this process is the training run of the shim's AOT cache (JCCL_SHIM_AOT_CACHE): its JVM "
                    + "records what it loads and profiles, and the finalize of NCCL's last communicator (ncclNet v11 and "
                    + "later, or jccl-shim-train) has the JVM write the cache, which takes a second or more. Of "
                    + "processes that share the file (the ranks of a job) the first trains and the others run without "
                    + "it (a lock beside it, FILE.lock); needs JDK 25+ with java.management, jdk.management and jdk.jfr.")
    public static final String JCCL_SHIM_AOT_TRAIN = "JCCL_SHIM_AOT_TRAIN";

    @EnvVar(defaultValue = "",
            description = "1: the native shim times NCCL's isend, irecv and test calls around the crossing into Java "
                    + "and prints one line per process at exit (calls, mean ns, polls per completion).")
    public static final String JCCL_SHIM_PROFILE = "JCCL_SHIM_PROFILE";

    @EnvVar(defaultValue = "0",
            description = "1: the native shim passes a transport's CUDA pointer support (NCCL_PTR_CUDA) on to NCCL, "
                    + "which may then keep its network buffers in GPU memory (GPUDirect, with NCCL_NET_GDR_LEVEL); 0: "
                    + "NCCL is told host memory only and stages through pinned host buffers. Off by default: "
                    + "JcclSocket's device path (pinned host mirrors) is slower than NCCL's host staging. Honoured only "
                    + "with CUDA_DEVICE_MAX_CONNECTIONS of at least 32 (else one WARN line and host staging): with fewer "
                    + "hardware queues the transport's copies can queue behind NCCL's kernels that wait for them, a "
                    + "deadlock (README, GPUDirect under NCCL).")
    public static final String JCCL_SHIM_GDR = "JCCL_SHIM_GDR";
}
