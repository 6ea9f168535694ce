package io.jccl.core.topology;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;

/**
 * The CPUs this process may run on, as the kernel says ({@code Cpus_allowed_list} in
 * {@code /proc/self/status}): what a launcher's binding ({@code mpirun --bind-to core},
 * {@code taskset}, a cpuset) left it. The ranks of one host, taken together, share the union of
 * their lists; {@code Runtime.availableProcessors()} alone cannot tell four ranks bound to a core
 * each from four ranks sharing one.
 */
public final class CpuBinding {
    private CpuBinding() {
    }

    /** @return this process's allowed CPU list, e.g. {@code 0-3,8}; empty where the kernel does not say */
    public static String allowedList() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII);
            for (String line : lines) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            return "";
        }
        return "";
    }

    /** @return the CPUs a kernel CPU list names; empty for an empty or malformed list */
    public static BitSet cpusOf(String list) {
        BitSet cpus = NicChoice.parseList(list);
        return cpus == null ? new BitSet() : cpus;
    }
}
