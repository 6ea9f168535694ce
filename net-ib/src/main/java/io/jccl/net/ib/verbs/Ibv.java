package io.jccl.net.ib.verbs;

/**
 * The enumerators of {@code infiniband/verbs.h} that the transport uses, with their C names and
 * values (rdma-core; the values are part of the verbs ABI and have not changed since they were
 * introduced).
 */
public final class Ibv {
    private Ibv() {
    }

    // enum ibv_port_state
    public static final int PORT_ACTIVE = 4;

    // IBV_LINK_LAYER_*
    public static final int LINK_LAYER_UNSPECIFIED = 0;
    public static final int LINK_LAYER_INFINIBAND = 1;
    public static final int LINK_LAYER_ETHERNET = 2;

    // enum ibv_mtu: 1 = 256 B ... 5 = 4096 B
    public static final int MTU_256 = 1;
    public static final int MTU_4096 = 5;

    // enum ibv_gid_type
    public static final int GID_TYPE_IB = 0;
    public static final int GID_TYPE_ROCE_V1 = 1;
    public static final int GID_TYPE_ROCE_V2 = 2;

    // enum ibv_access_flags
    public static final int ACCESS_LOCAL_WRITE = 1;
    public static final int ACCESS_REMOTE_WRITE = 1 << 1;
    public static final int ACCESS_REMOTE_READ = 1 << 2;
    public static final int ACCESS_REMOTE_ATOMIC = 1 << 3;

    // enum ibv_qp_type
    public static final int QPT_RC = 2;

    // enum ibv_qp_state
    public static final int QPS_RESET = 0;
    public static final int QPS_INIT = 1;
    public static final int QPS_RTR = 2;
    public static final int QPS_RTS = 3;
    public static final int QPS_ERR = 6;

    // enum ibv_qp_attr_mask
    public static final int QP_STATE = 1;
    public static final int QP_ACCESS_FLAGS = 1 << 3;
    public static final int QP_PKEY_INDEX = 1 << 4;
    public static final int QP_PORT = 1 << 5;
    public static final int QP_AV = 1 << 7;
    public static final int QP_PATH_MTU = 1 << 8;
    public static final int QP_TIMEOUT = 1 << 9;
    public static final int QP_RETRY_CNT = 1 << 10;
    public static final int QP_RNR_RETRY = 1 << 11;
    public static final int QP_RQ_PSN = 1 << 12;
    public static final int QP_MAX_QP_RD_ATOMIC = 1 << 13;
    public static final int QP_MIN_RNR_TIMER = 1 << 15;
    public static final int QP_SQ_PSN = 1 << 16;
    public static final int QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    public static final int QP_DEST_QPN = 1 << 20;

    // enum ibv_wr_opcode
    public static final int WR_RDMA_WRITE = 0;
    public static final int WR_RDMA_WRITE_WITH_IMM = 1;
    public static final int WR_RDMA_READ = 4;

    // enum ibv_send_flags
    public static final int SEND_SIGNALED = 1 << 1;
    public static final int SEND_INLINE = 1 << 3;

    // enum ibv_wc_status
    public static final int WC_SUCCESS = 0;
    public static final int WC_WR_FLUSH_ERR = 5;
    public static final int WC_REM_ACCESS_ERR = 10;
    public static final int WC_RETRY_EXC_ERR = 12;
    public static final int WC_RNR_RETRY_EXC_ERR = 13;

    // enum ibv_wc_opcode
    public static final int WC_RDMA_WRITE = 1;
    public static final int WC_RDMA_READ = 2;
    public static final int WC_RECV_RDMA_WITH_IMM = 129;

    // enum ibv_wc_flags
    public static final int WC_WITH_IMM = 1 << 1;

    // enum ibv_event_type
    public static final int EVENT_CQ_ERR = 0;
    public static final int EVENT_QP_FATAL = 1;
    public static final int EVENT_QP_REQ_ERR = 2;
    public static final int EVENT_QP_ACCESS_ERR = 3;
    public static final int EVENT_COMM_EST = 4;
    public static final int EVENT_SQ_DRAINED = 5;
    public static final int EVENT_PATH_MIG = 6;
    public static final int EVENT_PATH_MIG_ERR = 7;
    public static final int EVENT_DEVICE_FATAL = 8;
    public static final int EVENT_PORT_ACTIVE = 9;
    public static final int EVENT_PORT_ERR = 10;
    public static final int EVENT_LID_CHANGE = 11;
    public static final int EVENT_PKEY_CHANGE = 12;
    public static final int EVENT_SM_CHANGE = 13;
    public static final int EVENT_SRQ_ERR = 14;
    public static final int EVENT_SRQ_LIMIT_REACHED = 15;
    public static final int EVENT_QP_LAST_WQE_REACHED = 16;
    public static final int EVENT_CLIENT_REREGISTER = 17;
    public static final int EVENT_GID_CHANGE = 18;
    public static final int EVENT_WQ_FATAL = 19;

    /**
     * @param mtu an {@code enum ibv_mtu} value
     * @return the MTU in bytes, or 0 for a value outside 1..5
     */
    public static int mtuBytes(int mtu) {
        return mtu >= MTU_256 && mtu <= MTU_4096 ? 128 << mtu : 0;
    }
}
