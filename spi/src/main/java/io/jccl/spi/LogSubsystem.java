package io.jccl.spi;

import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;

/**
 * NCCL's {@code ncclDebugLogSubSys} bit flags (as of NCCL 2.30), and the parser for
 * {@code NCCL_DEBUG_SUBSYS} lists such as {@code INIT,NET} or {@code ^PROXY}.
 */
public final class LogSubsystem {
    public static final long INIT = 0x1;
    public static final long COLL = 0x2;
    public static final long P2P = 0x4;
    public static final long SHM = 0x8;
    public static final long NET = 0x10;
    public static final long GRAPH = 0x20;
    public static final long TUNING = 0x40;
    public static final long ENV = 0x80;
    public static final long ALLOC = 0x100;
    public static final long CALL = 0x200;
    public static final long PROXY = 0x400;
    public static final long NVLS = 0x800;
    public static final long BOOTSTRAP = 0x1000;
    public static final long REG = 0x2000;
    public static final long PROFILE = 0x4000;
    public static final long RAS = 0x8000;
    public static final long DESTROY = 0x10000;
    public static final long ALLOC_HOST = 0x20000;
    /** Every subsystem ({@code NCCL_ALL} = ~0). */
    public static final long ALL = ~0L;

    private static final Map<String, Long> BY_NAME = new TreeMap<>();

    static {
        BY_NAME.put("INIT", INIT);
        BY_NAME.put("COLL", COLL);
        BY_NAME.put("P2P", P2P);
        BY_NAME.put("SHM", SHM);
        BY_NAME.put("NET", NET);
        BY_NAME.put("GRAPH", GRAPH);
        BY_NAME.put("TUNING", TUNING);
        BY_NAME.put("ENV", ENV);
        BY_NAME.put("ALLOC", ALLOC);
        BY_NAME.put("CALL", CALL);
        BY_NAME.put("PROXY", PROXY);
        BY_NAME.put("NVLS", NVLS);
        BY_NAME.put("BOOTSTRAP", BOOTSTRAP);
        BY_NAME.put("REG", REG);
        BY_NAME.put("PROFILE", PROFILE);
        BY_NAME.put("RAS", RAS);
        BY_NAME.put("DESTROY", DESTROY);
        BY_NAME.put("ALLOC_HOST", ALLOC_HOST);
    }

    private LogSubsystem() {
    }

    /**
     * Parses an {@code NCCL_DEBUG_SUBSYS} value: a comma list of names ({@code ALL} included);
     * a leading {@code ^} inverts it. Empty or null means NCCL's default, {@code INIT,BOOTSTRAP,ENV}.
     *
     * @throws IllegalArgumentException naming the unknown subsystem and the known ones
     */
    public static long parse(String value) {
        if (value == null || value.isBlank()) {
            return INIT | BOOTSTRAP | ENV;
        }
        String v = value.trim();
        boolean invert = v.startsWith("^");
        if (invert) {
            v = v.substring(1);
        }
        long mask = 0;
        for (String part : v.split(",")) {
            String name = part.trim().toUpperCase(Locale.ROOT);
            if (name.isEmpty()) {
                continue;
            }
            if (name.equals("ALL")) {
                mask = ALL;
                continue;
            }
            Long bit = BY_NAME.get(name);
            if (bit == null) {
                throw new IllegalArgumentException("NCCL_DEBUG_SUBSYS: unknown subsystem '" + part.trim()
                        + "'; known: ALL " + String.join(" ", BY_NAME.keySet()));
            }
            mask |= bit;
        }
        return invert ? ~mask : mask;
    }

    /** @return the names of the set bits, e.g. {@code INIT|NET}, or {@code ALL} */
    public static String describe(long mask) {
        if (mask == ALL) {
            return "ALL";
        }
        StringJoiner j = new StringJoiner("|");
        BY_NAME.forEach((name, bit) -> {
            if ((mask & bit) != 0) {
                j.add(name);
            }
        });
        return j.length() == 0 ? "none" : j.toString();
    }
}
