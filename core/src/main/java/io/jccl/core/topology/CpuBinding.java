package io.jccl.core.topology;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashSet;
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

    /**
     * @param hostIds             each rank's host
     * @param availableProcessors each rank's {@code Runtime.availableProcessors()} (a CPU quota counts)
     * @param allowed             each rank's allowed CPUs ({@link #cpusOf}; empty where unknown)
     * @return the most ranks per core on any host, at least 1; the same wherever it is computed
     *         from the same lists
     */
    public static double ranksPerCore(String[] hostIds, int[] availableProcessors, BitSet[] allowed) {
        double most = 1;
        for (String host : new HashSet<>(Arrays.asList(hostIds))) {
            most = Math.max(most, ranksPerCoreOn(host, hostIds, availableProcessors, allowed));
        }
        return most;
    }

    /**
     * @param host one of {@code hostIds}
     * @return the ranks on {@code host} per core they run on together; above 1 means they compete
     *         for cores (a waiting rank should then give its core up soon)
     */
    public static double ranksPerCoreOn(String host, String[] hostIds, int[] availableProcessors, BitSet[] allowed) {
        List<Integer> ranks = new ArrayList<>();
        for (int r = 0; r < hostIds.length; r++) {
            if (hostIds[r].equals(host)) {
                ranks.add(r);
            }
        }
        return (double) ranks.size() / sharedCores(ranks, availableProcessors, allowed);
    }

    /**
     * The cores the ranks of one host run on together: the union of their bindings, or, under a CPU
     * quota (fewer usable processors than allowed CPUs) or where a binding is unknown, the most
     * processors a rank there may use.
     */
    private static int sharedCores(List<Integer> ranks, int[] availableProcessors, BitSet[] allowed) {
        BitSet union = new BitSet();
        int quota = 0;
        boolean capped = false;
        for (int r : ranks) {
            union.or(allowed[r]);
            quota = Math.max(quota, availableProcessors[r]);
            capped |= allowed[r].isEmpty() || availableProcessors[r] < allowed[r].cardinality();
        }
        return Math.max(1, capped ? quota : union.cardinality());
    }
}
