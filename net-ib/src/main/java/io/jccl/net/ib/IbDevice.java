package io.jccl.net.ib;

import io.jccl.net.ib.verbs.Ibv;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.NetProperties;
import io.jccl.spi.PointerType;

import java.net.InetAddress;

/**
 * One device of the transport: an active port of an HCA, as NCCL counts them (a dual-port NIC with
 * both ports up is two devices).
 *
 * @param index      the device index the SPI uses
 * @param hca        the opened adapter
 * @param port       the port number (from 1)
 * @param linkLayer  {@link Ibv#LINK_LAYER_INFINIBAND} or {@link Ibv#LINK_LAYER_ETHERNET} (RoCE)
 * @param activeMtu  {@code enum ibv_mtu} of the port
 * @param lid        the port's LID (0 on RoCE)
 * @param maxMessage {@code max_msg_sz}: the largest single RDMA write; longer transfers are split
 * @param speedMbps  active speed times active width
 * @param gid        the GID the queue pairs use
 * @param oobAddress the local address of the TCP side channel
 * @param uniqueName the device's name, with {@code :port} when the adapter exposes several ports
 */
record IbDevice(int index, Hca hca, int port, int linkLayer, int activeMtu, int lid, long maxMessage, int speedMbps,
        GidSelector.Gid gid, InetAddress oobAddress, String uniqueName) {

    /** The largest grouped receive, NCCL's {@code NCCL_NET_IB_MAX_RECVS}. */
    static final int MAX_RECVS = 8;

    boolean isRoce() {
        return linkLayer == Ibv.LINK_LAYER_ETHERNET;
    }

    NetProperties properties() {
        return NetProperties.builder(uniqueName)
                .pciPath(hca.pciPath)
                .guid(hca.guid)
                .ptrSupport(PointerType.HOST.mask())
                .speedMbps(speedMbps)
                .port(port)
                .latencyUs(0f)
                .maxComms(hca.maxQp)
                .maxRecvs(MAX_RECVS)
                .regIsGlobal(true)
                .forceFlush(false)
                .maxP2pBytes(NetProperties.DEFAULT_MAX_P2P_BYTES)
                .maxCollBytes(NetProperties.DEFAULT_MAX_COLL_BYTES)
                .build();
    }

    @Override
    public String toString() {
        return uniqueName + " port " + port + " (" + (isRoce() ? "RoCE" : "IB") + ", " + speedMbps + " Mbps, MTU "
                + Ibv.mtuBytes(activeMtu) + ", " + gid + ")";
    }

    /** Requests in flight per comm that the SPI requires. */
    static int maxRequests() {
        return NetPlugin.MAX_REQUESTS;
    }
}
