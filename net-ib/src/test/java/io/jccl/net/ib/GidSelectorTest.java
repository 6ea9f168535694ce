package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** NCCL's GID choice (spec 8.6) over GID tables like rxe's and a dual-stack RoCE NIC's. */
class GidSelectorTest {

    @AfterEach
    void clear() {
        for (String v : List.of(IbConfig.NCCL_IB_GID_INDEX, IbConfig.NCCL_IB_ADDR_FAMILY, IbConfig.NCCL_IB_ADDR_RANGE,
                IbConfig.NCCL_IB_ROCE_VERSION_NUM)) {
            System.clearProperty(v);
        }
    }

    private static GidSelector.Gid gid(int index, int type, String address) throws Exception {
        byte[] ip = InetAddress.getByName(address).getAddress();
        byte[] raw = new byte[16];
        if (ip.length == 4) {
            raw[10] = (byte) 0xff;
            raw[11] = (byte) 0xff;
            System.arraycopy(ip, 0, raw, 12, 4);
        } else {
            raw = ip;
        }
        return new GidSelector.Gid(index, type, raw, 1);
    }

    /** What rdma_rxe on a dummy netdev with 169.254.77.1 shows. */
    private static List<GidSelector.Gid> rxeTable() throws Exception {
        return List.of(gid(0, Ibv.GID_TYPE_ROCE_V2, "fe80::f460:eeff:fe50:dd2f"),
                gid(1, Ibv.GID_TYPE_ROCE_V2, "169.254.77.1"));
    }

    /** A RoCE NIC with v1 and v2 entries for an IPv6 and an IPv4 address. */
    private static List<GidSelector.Gid> dualStack() throws Exception {
        return List.of(gid(0, Ibv.GID_TYPE_ROCE_V1, "fe80::1"), gid(1, Ibv.GID_TYPE_ROCE_V2, "fe80::1"),
                gid(2, Ibv.GID_TYPE_ROCE_V1, "fd00::5"), gid(3, Ibv.GID_TYPE_ROCE_V2, "fd00::5"),
                gid(4, Ibv.GID_TYPE_ROCE_V1, "10.1.2.3"), gid(5, Ibv.GID_TYPE_ROCE_V2, "10.1.2.3"));
    }

    @Test
    void roceSkipsLinkLocalAndPrefersIpv4RoceV2() throws Exception {
        assertEquals(1, GidSelector.select(Ibv.LINK_LAYER_ETHERNET, rxeTable(), IbConfig.fromEnvironment()).index());
        assertEquals(5, GidSelector.select(Ibv.LINK_LAYER_ETHERNET, dualStack(), IbConfig.fromEnvironment()).index());
    }

    @Test
    void familyAndVersionAreConfigurable() throws Exception {
        System.setProperty(IbConfig.NCCL_IB_ADDR_FAMILY, "AF_INET6");
        assertEquals(3, GidSelector.select(Ibv.LINK_LAYER_ETHERNET, dualStack(), IbConfig.fromEnvironment()).index());
        System.setProperty(IbConfig.NCCL_IB_ROCE_VERSION_NUM, "1");
        assertEquals(2, GidSelector.select(Ibv.LINK_LAYER_ETHERNET, dualStack(), IbConfig.fromEnvironment()).index());
    }

    @Test
    void addressRangeRestrictsTheChoice() throws Exception {
        System.setProperty(IbConfig.NCCL_IB_ADDR_RANGE, "192.168.0.0/16");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GidSelector.select(Ibv.LINK_LAYER_ETHERNET, dualStack(), IbConfig.fromEnvironment()));
        assertTrue(e.getMessage().contains("NCCL_IB_ADDR_RANGE"), e.getMessage());
        System.setProperty(IbConfig.NCCL_IB_ADDR_RANGE, "10.0.0.0/8");
        assertEquals(5, GidSelector.select(Ibv.LINK_LAYER_ETHERNET, dualStack(), IbConfig.fromEnvironment()).index());
    }

    @Test
    void anExplicitIndexWinsAndMustExist() throws Exception {
        System.setProperty(IbConfig.NCCL_IB_GID_INDEX, "0");
        assertEquals(0, GidSelector.select(Ibv.LINK_LAYER_ETHERNET, rxeTable(), IbConfig.fromEnvironment()).index());
        System.setProperty(IbConfig.NCCL_IB_GID_INDEX, "7");
        assertThrows(IllegalStateException.class,
                () -> GidSelector.select(Ibv.LINK_LAYER_ETHERNET, rxeTable(), IbConfig.fromEnvironment()));
    }

    @Test
    void infinibandUsesIndexZero() throws Exception {
        List<GidSelector.Gid> ib = List.of(gid(0, Ibv.GID_TYPE_IB, "fe80::2"), gid(1, Ibv.GID_TYPE_IB, "fe80::3"));
        assertEquals(0, GidSelector.select(Ibv.LINK_LAYER_INFINIBAND, ib, IbConfig.fromEnvironment()).index());
    }

    @Test
    void onlyLinkLocalGidsIsAClearError() throws Exception {
        List<GidSelector.Gid> table = List.of(gid(0, Ibv.GID_TYPE_ROCE_V2, "fe80::9"));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> GidSelector.select(Ibv.LINK_LAYER_ETHERNET, table, IbConfig.fromEnvironment()));
        assertTrue(e.getMessage().contains("NCCL_IB_GID_INDEX"), e.getMessage());
    }

    @Test
    void gidViews() throws Exception {
        GidSelector.Gid v4 = gid(1, Ibv.GID_TYPE_ROCE_V2, "169.254.77.1");
        assertTrue(v4.isIpv4Mapped());
        assertFalse(v4.isLinkLocal());
        assertEquals("169.254.77.1", v4.inetAddress().getHostAddress());
        GidSelector.Gid ll = gid(0, Ibv.GID_TYPE_ROCE_V2, "fe80::1");
        assertTrue(ll.isLinkLocal());
        assertFalse(ll.isIpv4Mapped());
    }

    @Test
    void cidrRanges() {
        AddressRange r = AddressRange.parse("X", "10.128.0.0/9");
        assertTrue(r.contains(new byte[] {10, (byte) 200, 1, 1}));
        assertFalse(r.contains(new byte[] {10, 1, 1, 1}));
        assertFalse(r.contains(new byte[16]), "an IPv4 range never matches IPv6");
        assertThrows(IllegalArgumentException.class, () -> AddressRange.parse("X", "10.0.0.0"));
        assertThrows(IllegalArgumentException.class, () -> AddressRange.parse("X", "10.0.0.0/33"));
        assertThrows(IllegalArgumentException.class, () -> AddressRange.parse("X", "example.com/8"));
    }
}
