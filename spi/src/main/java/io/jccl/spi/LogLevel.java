package io.jccl.spi;

import java.util.Locale;

/**
 * NCCL's {@code ncclDebugLogLevel}, with the same numbering, and the values {@code NCCL_DEBUG}
 * accepts. A message is shown when its level is at or below the configured one.
 */
public enum LogLevel {
    NONE(0),
    VERSION(1),
    WARN(2),
    INFO(3),
    ABORT(4),
    TRACE(5);

    private static final LogLevel[] BY_CODE = values();

    private final int code;

    LogLevel(int code) {
        this.code = code;
    }

    /** @return the {@code ncclDebugLogLevel} value */
    public int code() {
        return code;
    }

    /** @return the level with this {@code ncclDebugLogLevel} value; unknown values clamp to the range */
    public static LogLevel fromCode(int code) {
        return BY_CODE[Math.max(0, Math.min(code, BY_CODE.length - 1))];
    }

    /**
     * @param value an {@code NCCL_DEBUG} value such as {@code INFO}; case-insensitive
     * @return the level
     * @throws IllegalArgumentException listing the accepted values
     */
    public static LogLevel parse(String value) {
        try {
            return valueOf(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("NCCL_DEBUG=" + value
                    + " is not a level; use VERSION, WARN, INFO, ABORT or TRACE", e);
        }
    }
}
