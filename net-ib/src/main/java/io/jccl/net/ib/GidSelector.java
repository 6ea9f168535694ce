package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;

/**
 * Chooses the GID a port's queue pairs use (NCCL's {@code ncclIbGetGidIndex}, spec 8.6).
 *
 * <p>InfiniBand: {@code NCCL_IB_GID_INDEX} if set, else 0. RoCE: {@code NCCL_IB_GID_INDEX} if
 * set; else the lowest index whose GID is configured, not link-local ({@code fe80::/10}), of the
 * wanted address family (IPv4-mapped {@code ::ffff:a.b.c.d} for {@code AF_INET}), of the wanted
 * RoCE version and inside {@code NCCL_IB_ADDR_RANGE}. When nothing matches exactly, the closest GID
 * wins: family first, then version, as NCCL's preference order does.
 */
public final class GidSelector {
    private GidSelector() {
    }

    /**
     * One valid entry of a GID table ({@code struct ibv_gid_entry}).
     *
     * @param index the GID index
     * @param type  {@code enum ibv_gid_type}
     * @param raw   the 16 bytes
     * @param port  the port it belongs to
     */
    public record Gid(int index, int type, byte[] raw, int port) {
        /** @return whether this is an IPv4-mapped GID ({@code ::ffff:a.b.c.d}) */
        public boolean isIpv4Mapped() {
            for (int i = 0; i < 10; i++) {
                if (raw[i] != 0) {
                    return false;
                }
            }
            return (raw[10] & 0xff) == 0xff && (raw[11] & 0xff) == 0xff;
        }

        /** @return whether every byte is zero (an unconfigured slot) */
        public boolean isZero() {
            for (byte b : raw) {
                if (b != 0) {
                    return false;
                }
            }
            return true;
        }

        /** @return whether this is an IPv6 link-local GID ({@code fe80::/10}) */
        public boolean isLinkLocal() {
            return (raw[0] & 0xff) == 0xfe && (raw[1] & 0xc0) == 0x80;
        }

        /** @return the IP address the GID carries (IPv4 for a mapped GID) */
        public byte[] ipAddress() {
            return isIpv4Mapped() ? Arrays.copyOfRange(raw, 12, 16) : raw.clone();
        }

        /** @return the GID as an address, e.g. {@code /169.254.77.1} or {@code /fe80:0:0:0:...} */
        public InetAddress inetAddress() {
            try {
                return InetAddress.getByAddress(ipAddress());
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public String toString() {
            return "GID[" + index + "] " + inetAddress().getHostAddress() + " " + switch (type) {
                case Ibv.GID_TYPE_IB -> "IB";
                case Ibv.GID_TYPE_ROCE_V1 -> "RoCE v1";
                case Ibv.GID_TYPE_ROCE_V2 -> "RoCE v2";
                default -> "type " + type;
            };
        }
    }

    /**
     * @param linkLayer {@link Ibv#LINK_LAYER_INFINIBAND} or {@link Ibv#LINK_LAYER_ETHERNET}
     * @param gids      the port's valid GIDs
     * @param config    the transport's configuration
     * @return the chosen GID
     * @throws IllegalStateException with the reason if no GID fits
     */
    public static Gid select(int linkLayer, List<Gid> gids, IbConfig config) {
        if (config.gidIndex() >= 0) {
            for (Gid g : gids) {
                if (g.index() == config.gidIndex()) {
                    return g;
                }
            }
            throw new IllegalStateException(IbConfig.NCCL_IB_GID_INDEX + "=" + config.gidIndex()
                    + " is not a valid GID of this port; valid: " + gids);
        }
        if (linkLayer != Ibv.LINK_LAYER_ETHERNET) {
            for (Gid g : gids) {
                if (g.index() == 0) {
                    return g;
                }
            }
            throw new IllegalStateException("the InfiniBand port has no GID 0");
        }
        int wantType = config.roceVersion() == 1 ? Ibv.GID_TYPE_ROCE_V1 : Ibv.GID_TYPE_ROCE_V2;
        Gid best = null;
        int bestScore = -1;
        for (Gid g : gids) {
            if (g.isZero() || g.isLinkLocal()) {
                continue;
            }
            boolean familyOk = (config.addressFamily() == 4) == g.isIpv4Mapped();
            boolean inRange = config.addressRange() == null || config.addressRange().contains(g.ipAddress());
            if (!inRange) {
                continue;
            }
            int score = (familyOk ? 2 : 0) + (g.type() == wantType ? 1 : 0);
            if (score > bestScore) {
                best = g;
                bestScore = score;
            }
        }
        if (best == null) {
            throw new IllegalStateException("no routable RoCE GID" + (config.addressRange() == null ? ""
                    : " inside " + IbConfig.NCCL_IB_ADDR_RANGE + "=" + config.addressRange())
                    + " (link-local and unconfigured GIDs are skipped); GIDs: " + gids
                    + "; give the port an IP address or set " + IbConfig.NCCL_IB_GID_INDEX);
        }
        return best;
    }
}
