package io.jccl.net.ib;

/**
 * A port's speed from {@code ibv_port_attr.active_speed} and {@code active_width}, as NCCL computes
 * it (spec 8.1): the per-lane rate of the first set bit of {@code active_speed} times the lane
 * count of the first set bit of {@code active_width}.
 */
public final class LinkSpeed {
    /** Mbps per lane for speed bits 0..8: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR. */
    private static final int[] LANE_MBPS = {2_500, 5_000, 10_000, 10_000, 14_000, 25_000, 50_000, 100_000, 200_000};
    /** Lanes for width bits 0..4: 1x, 4x, 8x, 12x, 2x. */
    private static final int[] LANES = {1, 4, 8, 12, 2};

    private LinkSpeed() {
    }

    /**
     * @param activeSpeed {@code ibv_port_attr.active_speed} as an unsigned value (a single bit,
     *                    e.g. 0x80 for NDR; 0x100 for XDR, which only {@code active_speed_ex} holds)
     * @param activeWidth {@code ibv_port_attr.active_width} as an unsigned value (e.g. 2 for 4x)
     * @return the port speed in Mbps, e.g. 400000 for NDR 4x; SDR 1x for values with no known bit
     */
    public static int mbps(int activeSpeed, int activeWidth) {
        return lane(LANE_MBPS, activeSpeed) * lane(LANES, activeWidth);
    }

    private static int lane(int[] table, int bits) {
        int i = bits == 0 ? 0 : Integer.numberOfTrailingZeros(bits);
        return table[Math.min(i, table.length - 1)];
    }
}
