package io.jccl.tck.internal;

import io.jccl.spi.LogLevel;
import io.jccl.spi.NetLogger;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.SpiConfig;
import io.jccl.spi.log.DebugLogger;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The logger the kit hands to {@code init}: it keeps the transport's recent lines so that a failed
 * rule can show what the transport logged meanwhile, and forwards every line to another logger.
 */
public final class RecordingLogger implements NetLogger {
    private static final int KEEP = 200;

    private final NetLogger forward;
    private final ArrayDeque<String> lines = new ArrayDeque<>();
    private long written;

    public RecordingLogger(NetLogger forward) {
        this.forward = forward;
    }

    /**
     * @return the kit's logger: it keeps every line for failure messages, and prints them as
     *         {@code NCCL_DEBUG} says only when {@code NCCL_DEBUG} is set, so that the warnings the
     *         fault rules provoke on purpose do not clutter a passing run
     */
    public static RecordingLogger forKit() {
        return new RecordingLogger(Env.isSet(SpiConfig.NCCL_DEBUG) ? DebugLogger.fromEnvironment("[tck]") : NetLogger.noop());
    }

    @Override
    public boolean isEnabled(LogLevel level, long subsystems) {
        return level.code() <= LogLevel.INFO.code() || forward.isEnabled(level, subsystems);
    }

    @Override
    public void log(LogLevel level, long subsystems, String message) {
        synchronized (lines) {
            if (lines.size() == KEEP) {
                lines.removeFirst();
            }
            lines.addLast(level + " " + message);
            written++;
        }
        if (forward.isEnabled(level, subsystems)) {
            forward.log(level, subsystems, message);
        }
    }

    /** @return a mark for {@link #linesSince} */
    public long mark() {
        synchronized (lines) {
            return written;
        }
    }

    /** @return the lines written since {@code mark}, of those still kept, oldest first */
    public List<String> linesSince(long mark) {
        synchronized (lines) {
            long newer = written - mark;
            List<String> all = new ArrayList<>(lines);
            int from = (int) Math.max(0, all.size() - newer);
            return all.subList(from, all.size());
        }
    }
}
