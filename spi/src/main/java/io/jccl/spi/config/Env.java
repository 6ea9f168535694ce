package io.jccl.spi.config;

import java.util.Locale;
import java.util.function.Function;

/**
 * Reads configuration variables.
 *
 * <p>A Java system property with exactly the variable's name wins over the environment variable
 * ({@code -DNCCL_SOCKET_IFNAME=eth0}), so tests and embedding applications can configure a JVM they
 * cannot give an environment. Blank values count as unset. Malformed values fail with an
 * {@link IllegalArgumentException} that names the variable.
 */
public final class Env {
    private Env() {
    }

    /** @return the variable's value, or {@code null} if unset or blank */
    public static String get(String name) {
        String v = System.getProperty(name);
        if (v == null) {
            v = System.getenv(name);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    /** @return the variable's value, or {@code defaultValue} if unset */
    public static String get(String name, String defaultValue) {
        String v = get(name);
        return v == null ? defaultValue : v;
    }

    /** @return whether the variable is set to a non-blank value */
    public static boolean isSet(String name) {
        return get(name) != null;
    }

    /**
     * @return the variable as an int, or {@code defaultValue} if unset
     * @throws IllegalArgumentException if the value is not an integer
     */
    public static int getInt(String name, int defaultValue) {
        return parse(name, defaultValue, Integer::decode, "an integer");
    }

    /**
     * @return the variable as a long, or {@code defaultValue} if unset
     * @throws IllegalArgumentException if the value is not an integer
     */
    public static long getLong(String name, long defaultValue) {
        return parse(name, defaultValue, Long::decode, "an integer");
    }

    /**
     * Reads a byte count such as {@code 4194304}, {@code 512K}, {@code 4M} or {@code 1G} (powers of
     * 1024, as nccl-tests reads sizes).
     *
     * @return the variable in bytes, or {@code defaultValue} if unset
     * @throws IllegalArgumentException if the value is not a size
     */
    public static long getBytes(String name, long defaultValue) {
        return parse(name, defaultValue, Env::parseBytes, "a size such as 4096, 512K, 4M or 1G");
    }

    /**
     * Reads a flag: {@code 1/0}, {@code true/false}, {@code yes/no}, {@code on/off}.
     *
     * @return the flag, or {@code defaultValue} if unset
     * @throws IllegalArgumentException for anything else
     */
    public static boolean getBoolean(String name, boolean defaultValue) {
        return parse(name, defaultValue, v -> switch (v.toLowerCase(Locale.ROOT)) {
            case "1", "true", "yes", "on" -> Boolean.TRUE;
            case "0", "false", "no", "off" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException(v);
        }, "1 or 0");
    }

    /**
     * Parses a byte count: digits with an optional K, M, G or T suffix (powers of 1024), case
     * insensitive, an optional trailing {@code B} or {@code iB} allowed.
     *
     * @throws IllegalArgumentException if the text is not a size
     */
    public static long parseBytes(String text) {
        String t = text.trim().toUpperCase(Locale.ROOT);
        if (t.endsWith("IB")) {
            t = t.substring(0, t.length() - 2);
        } else if (t.endsWith("B")) {
            t = t.substring(0, t.length() - 1);
        }
        long unit = 1;
        if (!t.isEmpty()) {
            switch (t.charAt(t.length() - 1)) {
                case 'K' -> unit = 1L << 10;
                case 'M' -> unit = 1L << 20;
                case 'G' -> unit = 1L << 30;
                case 'T' -> unit = 1L << 40;
                default -> { }
            }
        }
        if (unit != 1) {
            t = t.substring(0, t.length() - 1);
        }
        long n = Long.parseLong(t.trim());
        if (n < 0) {
            throw new IllegalArgumentException("negative size: " + text);
        }
        return Math.multiplyExact(n, unit);
    }

    private static <T> T parse(String name, T defaultValue, Function<String, T> parser, String expected) {
        String v = get(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            return parser.apply(v);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(name + "=" + v + " is not " + expected, e);
        }
    }
}
