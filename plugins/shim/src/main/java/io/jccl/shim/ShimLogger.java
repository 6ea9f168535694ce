package io.jccl.shim;

import io.jccl.spi.LogLevel;
import io.jccl.spi.LogSubsystem;
import io.jccl.spi.NetLogger;
import io.jccl.spi.config.Env;
import io.jccl.spi.config.SpiConfig;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The transport's log lines, handed to NCCL's logger (through the shim's C half, which calls it with
 * format {@code "%s"}) at the transport's level and subsystems, so they appear among NCCL's own.
 *
 * <p>NCCL filters what it prints; {@link #isEnabled} only spares the formatting of lines NCCL would
 * drop, reading {@code NCCL_DEBUG} and {@code NCCL_DEBUG_SUBSYS} as NCCL does. Warnings always pass.
 */
@SuppressWarnings("restricted") // FFM by design: native memory and calls are this class's job
final class ShimLogger implements NetLogger {
    private final MethodHandle log;
    private final LogLevel level;
    private final long subsystems;

    ShimLogger(long logFunction) {
        this.log = Linker.nativeLinker().downcallHandle(MemorySegment.ofAddress(logFunction), ShimAbi.LOG);
        LogLevel l;
        long s;
        try {
            l = LogLevel.parse(Env.get(SpiConfig.NCCL_DEBUG, "NONE"));
            s = LogSubsystem.parse(Env.get(SpiConfig.NCCL_DEBUG_SUBSYS));
        } catch (IllegalArgumentException e) {
            // NCCL decides what a value it does not know means; pass everything and let it filter.
            l = LogLevel.TRACE;
            s = LogSubsystem.ALL;
        }
        this.level = l;
        this.subsystems = s;
    }

    @Override
    public boolean isEnabled(LogLevel lineLevel, long lineSubsystems) {
        if (lineLevel.code() <= LogLevel.WARN.code()) {
            return lineLevel != LogLevel.NONE;
        }
        return lineLevel.code() <= level.code() && (lineSubsystems & subsystems) != 0;
    }

    @Override
    public void log(LogLevel lineLevel, long lineSubsystems, String message) {
        if (!isEnabled(lineLevel, lineSubsystems)) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            log.invokeExact(lineLevel.code(), lineSubsystems, arena.allocateFrom(message));
        } catch (Throwable e) {
            // A logger must never fail its caller; the line is lost, the transport goes on.
        }
    }
}
