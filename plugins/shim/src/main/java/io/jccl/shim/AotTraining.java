package io.jccl.shim;

import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetLogger;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.management.ObjectName;

/**
 * The end of a training run of the shim's AOT cache ({@code JCCL_SHIM_AOT_TRAIN=1}): the C half
 * started this JVM with {@code -XX:AOTCacheOutput=FILE}, which writes the cache only when the JVM
 * ends or is told to end the recording. A JVM inside NCCL's process never ends on its own (the
 * process exits around it), so the finalize of NCCL's last communicator ends the recording through
 * the JVM's diagnostic command {@code AOT.end_recording} (as {@code jcmd PID AOT.end_recording}
 * would); the JVM then writes the cache, with the classes loaded and the method profiles of the run
 * so far, and later JVMs of the shim start with it. Once per process.
 */
final class AotTraining {
    /** Set (to the cache's path) by the C half in a training run's JVM only. */
    static final String OUTPUT_PROPERTY = "jccl.shim.aotOutput";
    /**
     * The jars the run trains on, as the C half fingerprinted them (name, size and checksum of each);
     * written beside the cache as {@code PATH.classpath}, which the C half compares before it uses
     * the cache: JDK 25 itself does not notice a changed jar and would load its old classes.
     */
    static final String CLASS_PATH_PROPERTY = "jccl.shim.aotClassPath";
    /**
     * The diagnostic command needs the management modules of the runtime, and jdk.jfr: without it
     * JDK 25's DiagnosticCommand MBean offers one operation and no aotEndRecording (measured on a
     * jlink'ed runtime of java.base, java.management and jdk.management).
     */
    static final List<String> MODULES = List.of("java.management", "jdk.management", "jdk.jfr");

    private static final AtomicBoolean ENDED = new AtomicBoolean();

    private AotTraining() {
    }

    /** @return the cache this JVM's training run writes, or null outside a training run */
    static Path output() {
        String p = System.getProperty(OUTPUT_PROPERTY);
        return p == null ? null : Path.of(p);
    }

    /** @return null if a training run can end its recording here, else one line saying why not */
    static String problem() {
        List<String> missing = new ArrayList<>();
        for (String m : MODULES) {
            if (ModuleLayer.boot().findModule(m).isEmpty()) {
                missing.add(m);
            }
        }
        return missing.isEmpty() ? null : "JCCL_SHIM_AOT_TRAIN=1: the Java runtime " + System.getProperty("java.home")
                + " lacks " + String.join(", ", missing) + ", which ends the training run's recording: add "
                + String.join(",", MODULES) + " to the runtime (jlink --add-modules) or unset JCCL_SHIM_AOT_TRAIN";
    }

    /**
     * At a training run's start: removes the cache and the record a training before left at the
     * path, so that a cache found at the end is this run's, never an older one beside this run's
     * record of the jars.
     *
     * @return null, or one line saying why the old files could not be removed
     */
    static String begin() {
        Path out = output();
        if (out == null) {
            return null;
        }
        try {
            Files.deleteIfExists(out);
            Files.deleteIfExists(Path.of(out + ".classpath"));
            return null;
        } catch (java.io.IOException e) {
            return "JCCL_SHIM_AOT_TRAIN=1: cannot replace " + out + " (" + e + "): name a writable JCCL_SHIM_AOT_CACHE";
        }
    }

    /**
     * Ends the recording of a training run and has the JVM write the cache (it takes a second or
     * more); does nothing outside a training run or the second time.
     */
    static void end(NetLogger logger) {
        Path out = output();
        if (out == null || !ENDED.compareAndSet(false, true)) {
            return;
        }
        long start = System.nanoTime();
        try {
            Object said = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "aotEndRecording",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            long ms = (System.nanoTime() - start) / 1_000_000;
            if (Files.isRegularFile(out) && Files.size(out) > 0) {
                Files.writeString(Path.of(out + ".classpath"), System.getProperty(CLASS_PATH_PROPERTY, "") + "\n");
                logger.info(LogSubsystem.INIT | LogSubsystem.NET, "NET/JCCL: AOT cache written: %s (%.1f MiB in %d ms); "
                        + "JVMs the shim starts from now on load it", out, Files.size(out) / 1048576.0, ms);
            } else {
                logger.warn("NET/JCCL: JCCL_SHIM_AOT_TRAIN=1: the JVM did not write %s (%s)", out,
                        String.valueOf(said).strip().replace('\n', ' '));
            }
        } catch (Exception | LinkageError e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            logger.warn("NET/JCCL: JCCL_SHIM_AOT_TRAIN=1: ending the recording failed, %s not written: %s%s", out, e,
                    root == e ? "" : " (" + root + ")");
        }
    }
}
