package io.jccl.spi.log;

import io.jccl.spi.LogLevel;
import io.jccl.spi.LogSubsystem;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DebugLoggerTest {

    @Test
    void filtersByLevelAndSubsystemAsNcclDebugDoes() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        DebugLogger log = new DebugLogger(LogLevel.INFO, LogSubsystem.NET, out, "[1]");

        assertTrue(log.isEnabled(LogLevel.WARN, LogSubsystem.INIT), "warnings show for every subsystem");
        assertTrue(log.isEnabled(LogLevel.INFO, LogSubsystem.NET | LogSubsystem.INIT));
        assertFalse(log.isEnabled(LogLevel.INFO, LogSubsystem.PROXY));
        assertFalse(log.isEnabled(LogLevel.TRACE, LogSubsystem.NET));

        log.info(LogSubsystem.NET, "connected to %s", "peer");
        log.info(LogSubsystem.PROXY, "not shown");
        log.trace(LogSubsystem.NET, "not shown either");
        log.warn("careful");

        String[] lines = bytes.toString(StandardCharsets.UTF_8).split("\n");
        assertEquals(2, lines.length, String.join("\n", lines));
        assertTrue(lines[0].endsWith(" [1] JCCL INFO connected to peer"), lines[0]);
        assertTrue(lines[0].matches("[^:]+:\\d+:\\d+ .*"), "host:pid:tid prefix: " + lines[0]);
        assertTrue(lines[1].endsWith(" [1] JCCL WARN careful"), lines[1]);
    }

    @Test
    void environmentConfiguresLevelAndSubsystems() {
        System.setProperty("NCCL_DEBUG", "TRACE");
        System.setProperty("NCCL_DEBUG_SUBSYS", "^INIT");
        try {
            DebugLogger log = DebugLogger.fromEnvironment();
            assertEquals(LogLevel.TRACE, log.level());
            assertTrue(log.isEnabled(LogLevel.TRACE, LogSubsystem.NET));
            assertFalse(log.isEnabled(LogLevel.INFO, LogSubsystem.INIT));
        } finally {
            System.clearProperty("NCCL_DEBUG");
            System.clearProperty("NCCL_DEBUG_SUBSYS");
        }
    }
}
