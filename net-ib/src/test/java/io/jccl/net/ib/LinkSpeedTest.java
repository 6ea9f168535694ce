package io.jccl.net.ib;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Port speed = lane rate of active_speed x lanes of active_width (spec 8.1). */
class LinkSpeedTest {

    @Test
    void ndrTimesFourIs400Gbps() {
        assertEquals(400_000, LinkSpeed.mbps(0x80, 2));
    }

    @Test
    void softRoceReportsSdrOneX() {
        // rxe: active_speed 1 (2.5 Gbps), active_width 1 (1X)
        assertEquals(2_500, LinkSpeed.mbps(1, 1));
    }

    @Test
    void everyKnownSpeedAndWidth() {
        int[] lane = {2_500, 5_000, 10_000, 10_000, 14_000, 25_000, 50_000, 100_000, 200_000};
        for (int bit = 0; bit < lane.length; bit++) {
            assertEquals(lane[bit], LinkSpeed.mbps(1 << bit, 1), "speed bit " + bit);
        }
        assertEquals(4 * 25_000, LinkSpeed.mbps(32, 2), "EDR 4x");
        assertEquals(8 * 50_000, LinkSpeed.mbps(64, 4), "HDR 8x");
        assertEquals(12 * 14_000, LinkSpeed.mbps(16, 8), "FDR 12x");
        assertEquals(2 * 100_000, LinkSpeed.mbps(128, 16), "NDR 2x");
    }
}
