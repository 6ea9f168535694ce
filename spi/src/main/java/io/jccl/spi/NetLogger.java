package io.jccl.spi;

import java.util.Locale;

/**
 * Where a plugin writes its log lines: the Java form of NCCL's {@code ncclDebugLogger_t}, handed to
 * {@link NetPlugin#init}. Under real NCCL (through the native shim) the lines reach NCCL's logger at
 * the same level and subsystem; in Java they reach the engine's logger or
 * {@link io.jccl.spi.log.DebugLogger}.
 *
 * <p>Implementations must be thread-safe: every plugin thread may log. On hot paths guard with
 * {@link #isEnabled} so that a disabled line costs no formatting and no allocation.
 */
@FunctionalInterface
public interface NetLogger {

    /**
     * Writes one line.
     *
     * @param level      NCCL's level of the line
     * @param subsystems OR of {@link LogSubsystem} flags (use {@link LogSubsystem#ALL} for warnings)
     * @param message    the finished line, without a trailing newline
     */
    void log(LogLevel level, long subsystems, String message);

    /** @return whether a line of this level and subsystem would be written; the default says yes */
    default boolean isEnabled(LogLevel level, long subsystems) {
        return true;
    }

    /** Logs a warning ({@code NCCL_LOG_WARN}, all subsystems), formatting with {@link String#format}. */
    default void warn(String format, Object... args) {
        if (isEnabled(LogLevel.WARN, LogSubsystem.ALL)) {
            log(LogLevel.WARN, LogSubsystem.ALL, format(format, args));
        }
    }

    /** Logs an informational line for the given subsystems, formatting with {@link String#format}. */
    default void info(long subsystems, String format, Object... args) {
        if (isEnabled(LogLevel.INFO, subsystems)) {
            log(LogLevel.INFO, subsystems, format(format, args));
        }
    }

    /** Logs a trace line for the given subsystems, formatting with {@link String#format}. */
    default void trace(long subsystems, String format, Object... args) {
        if (isEnabled(LogLevel.TRACE, subsystems)) {
            log(LogLevel.TRACE, subsystems, format(format, args));
        }
    }

    private static String format(String format, Object... args) {
        return args.length == 0 ? format : String.format(Locale.ROOT, format, args);
    }

    /** @return a logger that drops everything */
    static NetLogger noop() {
        return NoopLogger.INSTANCE;
    }
}

/** The logger that writes nothing; its own type so {@link NetLogger#isEnabled} can say no. */
final class NoopLogger implements NetLogger {
    static final NoopLogger INSTANCE = new NoopLogger();

    private NoopLogger() {
    }

    @Override
    public void log(LogLevel level, long subsystems, String message) {
    }

    @Override
    public boolean isEnabled(LogLevel level, long subsystems) {
        return false;
    }
}
