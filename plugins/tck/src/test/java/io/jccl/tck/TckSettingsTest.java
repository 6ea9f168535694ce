package io.jccl.tck;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TckSettingsTest {

    @Test
    void defaultsMatchTheDocumentedOnes() {
        TckSettings s = TckSettings.from(k -> null);
        assertEquals(Duration.ofMillis(1000), s.callBound());
        assertEquals(Duration.ofSeconds(10), s.connectTimeout());
        assertEquals(Duration.ofSeconds(20), s.completionTimeout());
        assertEquals(Duration.ofSeconds(10), s.peerDeathTimeout());
        assertEquals(Duration.ofSeconds(180), s.ruleTimeout());
        assertEquals(256L << 20, s.maxMessageSize());
        assertEquals(2000, s.stressMessages());
    }

    @Test
    void variablesAreReadAndEveryDurationIsScaled() {
        Map<String, String> vars = Map.of(TckConfig.JCCL_TCK_TIMEOUT_SCALE, "2.5", TckConfig.JCCL_TCK_CALL_BOUND_MS, "100",
                TckConfig.JCCL_TCK_MAX_SIZE, "1G", TckConfig.JCCL_TCK_SEED, "0x2a");
        TckSettings s = TckSettings.from(vars::get);
        assertEquals(Duration.ofMillis(250), s.callBound());
        assertEquals(Duration.ofSeconds(25), s.connectTimeout());
        assertEquals(1L << 30, s.maxMessageSize());
        assertEquals(42, s.seed());
    }

    @Test
    void everySeedTheKitPrintsReplays() {
        for (long seed : new long[] {0x2aL, 0x37177fd90c44f4b5L, 0x8000000000000000L, 0xf00dcafe12345678L, -1L}) {
            String printed = String.format(java.util.Locale.ROOT, "0x%x", seed);
            assertEquals(seed, TckSettings.from(Map.of(TckConfig.JCCL_TCK_SEED, printed)::get).seed(), printed);
        }
        assertEquals(-5, TckSettings.from(Map.of(TckConfig.JCCL_TCK_SEED, "-5")::get).seed());
    }

    @Test
    void aMalformedValueNamesItsVariable() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TckSettings.from(Map.of(TckConfig.JCCL_TCK_CONNECT_TIMEOUT_MS, "soon")::get));
        assertTrue(e.getMessage().contains(TckConfig.JCCL_TCK_CONNECT_TIMEOUT_MS), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TckSettings.builder().timeoutScale(0).build());
        assertThrows(IllegalArgumentException.class, () -> TckSettings.builder().maxMessageSize(4L << 30).build());
    }
}
