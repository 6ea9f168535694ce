package io.jccl.spi.log;

import io.jccl.spi.LogLevel;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetLogger;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.SpiConfig;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A {@link NetLogger} that prints lines the way NCCL does:
 * {@code host:pid:tid [prefix] JCCL INFO message}.
 *
 * <p>Warnings and version lines are shown for every subsystem; INFO and TRACE lines only for the
 * subsystems selected by {@code NCCL_DEBUG_SUBSYS}.
 */
public final class DebugLogger implements NetLogger {
    private final LogLevel level;
    private final long subsystems;
    private final PrintStream out;
    private final String linePrefix;
    private final String tag;

    /**
     * @param level      the most verbose level shown
     * @param subsystems the subsystems shown at INFO and TRACE
     * @param out        where lines go
     * @param tag        printed before the level, e.g. a rank such as {@code [0]}; may be empty
     */
    public DebugLogger(LogLevel level, long subsystems, PrintStream out, String tag) {
        this.level = Objects.requireNonNull(level, "level");
        this.subsystems = subsystems;
        this.out = Objects.requireNonNull(out, "out");
        this.linePrefix = hostName() + ":" + ProcessHandle.current().pid() + ":";
        this.tag = tag == null || tag.isEmpty() ? "" : tag + " ";
    }

    /**
     * @return a logger configured by {@code NCCL_DEBUG}, {@code NCCL_DEBUG_SUBSYS} and
     *         {@code NCCL_DEBUG_FILE}
     * @throws IllegalArgumentException if one of them is malformed
     */
    public static DebugLogger fromEnvironment() {
        return fromEnvironment("");
    }

    /**
     * @param tag printed on every line before the level, e.g. {@code [rank 3]}
     * @return a logger configured by the environment, as {@link #fromEnvironment()}
     */
    public static DebugLogger fromEnvironment(String tag) {
        LogLevel level = LogLevel.parse(Env.get(SpiConfig.NCCL_DEBUG, "WARN"));
        long subsystems = LogSubsystem.parse(Env.get(SpiConfig.NCCL_DEBUG_SUBSYS));
        String file = Env.get(SpiConfig.NCCL_DEBUG_FILE);
        PrintStream out = System.err;
        if (file != null) {
            String path = file.replace("%h", hostName()).replace("%p", Long.toString(ProcessHandle.current().pid()));
            try {
                out = new PrintStream(new FileOutputStream(path, true), true, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException(SpiConfig.NCCL_DEBUG_FILE + "=" + file + ": cannot open " + path
                        + ": " + e.getMessage(), e);
            }
        }
        return new DebugLogger(level, subsystems, out, tag);
    }

    /** @return the most verbose level this logger shows */
    public LogLevel level() {
        return level;
    }

    @Override
    public boolean isEnabled(LogLevel lineLevel, long lineSubsystems) {
        if (lineLevel == LogLevel.NONE || lineLevel.code() > level.code()) {
            return false;
        }
        return lineLevel.code() < LogLevel.INFO.code() || (lineSubsystems & subsystems) != 0;
    }

    @Override
    public void log(LogLevel lineLevel, long lineSubsystems, String message) {
        if (!isEnabled(lineLevel, lineSubsystems)) {
            return;
        }
        out.println(linePrefix + Thread.currentThread().threadId() + " " + tag + "JCCL " + lineLevel.name() + " "
                + message);
    }

    private static String hostName() {
        String h = System.getenv("HOSTNAME");
        if (h != null && !h.isBlank()) {
            return h;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
