package io.jccl.net.ib.verbs;

import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.util.List;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.sequenceLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The C structs of {@code infiniband/verbs.h} (rdma-core, LP64) that the transport reads or writes,
 * described with {@link MemoryLayout}, and the byte offsets of their fields.
 *
 * <p>Each layout is named after its C struct and each member after its C member, so a nested path
 * such as {@code ah_attr.grh.sgid_index} is also the C designator that {@code offsetof} takes:
 * {@code VerbsLayoutTest} compiles a C program against the system's {@code verbs.h} from these
 * names and checks every offset and size. Members the transport never touches are padding.
 *
 * <p>The offsets are {@code static final} so that the JIT folds them into the data path's plain
 * {@code MemorySegment} accesses.
 */
public final class IbvLayouts {
    private IbvLayouts() {
    }

    private static final ValueLayout U8 = JAVA_BYTE;
    private static final ValueLayout U16 = JAVA_SHORT;
    private static final ValueLayout U32 = JAVA_INT;
    private static final ValueLayout U64 = JAVA_LONG;

    private static long offset(GroupLayout layout, String path) {
        String[] names = path.split("\\.");
        PathElement[] elements = new PathElement[names.length];
        for (int i = 0; i < names.length; i++) {
            elements[i] = PathElement.groupElement(names[i]);
        }
        return layout.byteOffset(elements);
    }

    /** {@code pthread_mutex_t} on x86_64 glibc: 40 bytes, 8-aligned; never touched. */
    private static MemoryLayout mutex(String name) {
        return sequenceLayout(5, U64).withName(name);
    }

    /** {@code pthread_cond_t} on x86_64 glibc: 48 bytes, 8-aligned; never touched. */
    private static MemoryLayout cond(String name) {
        return sequenceLayout(6, U64).withName(name);
    }

    /** {@code union ibv_gid}: 16 raw bytes, 8-aligned because of its {@code global} view. */
    public static final class Gid {
        public static final GroupLayout LAYOUT = unionLayout(
                sequenceLayout(16, U8).withName("raw"),
                structLayout(U64.withName("subnet_prefix"), U64.withName("interface_id")).withName("global"))
                .withName("ibv_gid");
        public static final long SIZE = LAYOUT.byteSize();

        private Gid() {
        }
    }

    /** {@code struct ibv_context}: the device handle; its {@code ops} table holds the inline verbs. */
    public static final class Context {
        private static final String[] OPS = {"_compat_query_device", "_compat_query_port", "_compat_alloc_pd",
                "_compat_dealloc_pd", "_compat_reg_mr", "_compat_rereg_mr", "_compat_dereg_mr", "alloc_mw", "bind_mw",
                "dealloc_mw", "_compat_create_cq", "poll_cq", "req_notify_cq", "_compat_cq_event",
                "_compat_resize_cq", "_compat_destroy_cq", "_compat_create_srq", "_compat_modify_srq",
                "_compat_query_srq", "_compat_destroy_srq", "post_srq_recv", "_compat_create_qp",
                "_compat_query_qp", "_compat_modify_qp", "_compat_destroy_qp", "post_send", "post_recv",
                "_compat_create_ah", "_compat_destroy_ah", "_compat_attach_mcast", "_compat_detach_mcast",
                "_compat_async_event"};

        private static MemoryLayout ops() {
            MemoryLayout[] slots = new MemoryLayout[OPS.length];
            for (int i = 0; i < OPS.length; i++) {
                slots[i] = ADDRESS.withName(OPS[i]);
            }
            return structLayout(slots).withName("ops");
        }

        public static final StructLayout LAYOUT = structLayout(
                ADDRESS.withName("device"),
                ops(),
                U32.withName("cmd_fd"),
                U32.withName("async_fd"),
                U32.withName("num_comp_vectors"),
                paddingLayout(4),
                mutex("mutex"),
                ADDRESS.withName("abi_compat"))
                .withName("ibv_context");
        public static final long OPS_POLL_CQ = offset(LAYOUT, "ops.poll_cq");
        public static final long OPS_POST_SEND = offset(LAYOUT, "ops.post_send");
        public static final long OPS_POST_RECV = offset(LAYOUT, "ops.post_recv");
        public static final long ASYNC_FD = offset(LAYOUT, "async_fd");

        private Context() {
        }
    }

    /** {@code struct ibv_device_attr}, filled by {@code ibv_query_device}. */
    public static final class DeviceAttr {
        public static final StructLayout LAYOUT = structLayout(
                sequenceLayout(64, U8).withName("fw_ver"),
                U64.withName("node_guid"),
                U64.withName("sys_image_guid"),
                U64.withName("max_mr_size"),
                U64.withName("page_size_cap"),
                U32.withName("vendor_id"),
                U32.withName("vendor_part_id"),
                U32.withName("hw_ver"),
                U32.withName("max_qp"),
                U32.withName("max_qp_wr"),
                U32.withName("device_cap_flags"),
                U32.withName("max_sge"),
                U32.withName("max_sge_rd"),
                U32.withName("max_cq"),
                U32.withName("max_cqe"),
                U32.withName("max_mr"),
                U32.withName("max_pd"),
                U32.withName("max_qp_rd_atom"),
                U32.withName("max_ee_rd_atom"),
                U32.withName("max_res_rd_atom"),
                U32.withName("max_qp_init_rd_atom"),
                paddingLayout(64),
                U16.withName("max_pkeys"),
                U8.withName("local_ca_ack_delay"),
                U8.withName("phys_port_cnt"),
                paddingLayout(4))
                .withName("ibv_device_attr");
        public static final long SYS_IMAGE_GUID = offset(LAYOUT, "sys_image_guid");
        public static final long NODE_GUID = offset(LAYOUT, "node_guid");
        public static final long MAX_QP = offset(LAYOUT, "max_qp");
        public static final long MAX_QP_WR = offset(LAYOUT, "max_qp_wr");
        public static final long MAX_CQE = offset(LAYOUT, "max_cqe");
        public static final long MAX_QP_RD_ATOM = offset(LAYOUT, "max_qp_rd_atom");
        public static final long MAX_QP_INIT_RD_ATOM = offset(LAYOUT, "max_qp_init_rd_atom");
        public static final long PHYS_PORT_CNT = offset(LAYOUT, "phys_port_cnt");

        private DeviceAttr() {
        }
    }

    /** {@code struct ibv_port_attr}, filled by {@code ibv_query_port}. */
    public static final class PortAttr {
        public static final StructLayout LAYOUT = structLayout(
                U32.withName("state"),
                U32.withName("max_mtu"),
                U32.withName("active_mtu"),
                U32.withName("gid_tbl_len"),
                U32.withName("port_cap_flags"),
                U32.withName("max_msg_sz"),
                U32.withName("bad_pkey_cntr"),
                U32.withName("qkey_viol_cntr"),
                U16.withName("pkey_tbl_len"),
                U16.withName("lid"),
                U16.withName("sm_lid"),
                U8.withName("lmc"),
                U8.withName("max_vl_num"),
                U8.withName("sm_sl"),
                U8.withName("subnet_timeout"),
                U8.withName("init_type_reply"),
                U8.withName("active_width"),
                U8.withName("active_speed"),
                U8.withName("phys_state"),
                U8.withName("link_layer"),
                U8.withName("flags"),
                U16.withName("port_cap_flags2"),
                paddingLayout(2))
                .withName("ibv_port_attr");
        public static final long STATE = offset(LAYOUT, "state");
        public static final long ACTIVE_MTU = offset(LAYOUT, "active_mtu");
        public static final long GID_TBL_LEN = offset(LAYOUT, "gid_tbl_len");
        public static final long MAX_MSG_SZ = offset(LAYOUT, "max_msg_sz");
        public static final long LID = offset(LAYOUT, "lid");
        public static final long ACTIVE_WIDTH = offset(LAYOUT, "active_width");
        public static final long ACTIVE_SPEED = offset(LAYOUT, "active_speed");
        public static final long LINK_LAYER = offset(LAYOUT, "link_layer");

        private PortAttr() {
        }
    }

    /** {@code struct ibv_gid_entry}, filled by {@code ibv_query_gid_table}. */
    public static final class GidEntry {
        public static final StructLayout LAYOUT = structLayout(
                Gid.LAYOUT.withName("gid"),
                U32.withName("gid_index"),
                U32.withName("port_num"),
                U32.withName("gid_type"),
                U32.withName("ndev_ifindex"))
                .withName("ibv_gid_entry");
        public static final long GID = offset(LAYOUT, "gid");
        public static final long GID_INDEX = offset(LAYOUT, "gid_index");
        public static final long PORT_NUM = offset(LAYOUT, "port_num");
        public static final long GID_TYPE = offset(LAYOUT, "gid_type");
        public static final long NDEV_IFINDEX = offset(LAYOUT, "ndev_ifindex");

        private GidEntry() {
        }
    }

    /** {@code struct ibv_qp_cap}. */
    private static MemoryLayout qpCap(String name) {
        return structLayout(
                U32.withName("max_send_wr"),
                U32.withName("max_recv_wr"),
                U32.withName("max_send_sge"),
                U32.withName("max_recv_sge"),
                U32.withName("max_inline_data"))
                .withName(name);
    }

    /** {@code struct ibv_qp_init_attr}, the argument of {@code ibv_create_qp}. */
    public static final class QpInitAttr {
        public static final StructLayout LAYOUT = structLayout(
                ADDRESS.withName("qp_context"),
                ADDRESS.withName("send_cq"),
                ADDRESS.withName("recv_cq"),
                ADDRESS.withName("srq"),
                qpCap("cap"),
                U32.withName("qp_type"),
                U32.withName("sq_sig_all"),
                paddingLayout(4))
                .withName("ibv_qp_init_attr");
        public static final long SEND_CQ = offset(LAYOUT, "send_cq");
        public static final long RECV_CQ = offset(LAYOUT, "recv_cq");
        public static final long CAP_MAX_SEND_WR = offset(LAYOUT, "cap.max_send_wr");
        public static final long CAP_MAX_RECV_WR = offset(LAYOUT, "cap.max_recv_wr");
        public static final long CAP_MAX_SEND_SGE = offset(LAYOUT, "cap.max_send_sge");
        public static final long CAP_MAX_RECV_SGE = offset(LAYOUT, "cap.max_recv_sge");
        public static final long CAP_MAX_INLINE_DATA = offset(LAYOUT, "cap.max_inline_data");
        public static final long QP_TYPE = offset(LAYOUT, "qp_type");

        private QpInitAttr() {
        }
    }

    /** {@code struct ibv_ah_attr} with its {@code struct ibv_global_route grh}. */
    private static MemoryLayout ahAttr(String name) {
        MemoryLayout grh = structLayout(
                Gid.LAYOUT.withName("dgid"),
                U32.withName("flow_label"),
                U8.withName("sgid_index"),
                U8.withName("hop_limit"),
                U8.withName("traffic_class"),
                paddingLayout(1))
                .withName("grh");
        return structLayout(
                grh,
                U16.withName("dlid"),
                U8.withName("sl"),
                U8.withName("src_path_bits"),
                U8.withName("static_rate"),
                U8.withName("is_global"),
                U8.withName("port_num"),
                paddingLayout(1))
                .withName(name);
    }

    /** {@code struct ibv_qp_attr}, the argument of {@code ibv_modify_qp}. */
    public static final class QpAttr {
        public static final StructLayout LAYOUT = structLayout(
                U32.withName("qp_state"),
                U32.withName("cur_qp_state"),
                U32.withName("path_mtu"),
                U32.withName("path_mig_state"),
                U32.withName("qkey"),
                U32.withName("rq_psn"),
                U32.withName("sq_psn"),
                U32.withName("dest_qp_num"),
                U32.withName("qp_access_flags"),
                qpCap("cap"),
                ahAttr("ah_attr"),
                ahAttr("alt_ah_attr"),
                U16.withName("pkey_index"),
                U16.withName("alt_pkey_index"),
                U8.withName("en_sqd_async_notify"),
                U8.withName("sq_draining"),
                U8.withName("max_rd_atomic"),
                U8.withName("max_dest_rd_atomic"),
                U8.withName("min_rnr_timer"),
                U8.withName("port_num"),
                U8.withName("timeout"),
                U8.withName("retry_cnt"),
                U8.withName("rnr_retry"),
                U8.withName("alt_port_num"),
                U8.withName("alt_timeout"),
                paddingLayout(1),
                U32.withName("rate_limit"),
                paddingLayout(4))
                .withName("ibv_qp_attr");
        public static final long QP_STATE = offset(LAYOUT, "qp_state");
        public static final long PATH_MTU = offset(LAYOUT, "path_mtu");
        public static final long RQ_PSN = offset(LAYOUT, "rq_psn");
        public static final long SQ_PSN = offset(LAYOUT, "sq_psn");
        public static final long DEST_QP_NUM = offset(LAYOUT, "dest_qp_num");
        public static final long QP_ACCESS_FLAGS = offset(LAYOUT, "qp_access_flags");
        public static final long AH_DGID = offset(LAYOUT, "ah_attr.grh.dgid");
        public static final long AH_FLOW_LABEL = offset(LAYOUT, "ah_attr.grh.flow_label");
        public static final long AH_SGID_INDEX = offset(LAYOUT, "ah_attr.grh.sgid_index");
        public static final long AH_HOP_LIMIT = offset(LAYOUT, "ah_attr.grh.hop_limit");
        public static final long AH_TRAFFIC_CLASS = offset(LAYOUT, "ah_attr.grh.traffic_class");
        public static final long AH_DLID = offset(LAYOUT, "ah_attr.dlid");
        public static final long AH_SL = offset(LAYOUT, "ah_attr.sl");
        public static final long AH_SRC_PATH_BITS = offset(LAYOUT, "ah_attr.src_path_bits");
        public static final long AH_IS_GLOBAL = offset(LAYOUT, "ah_attr.is_global");
        public static final long AH_PORT_NUM = offset(LAYOUT, "ah_attr.port_num");
        public static final long PKEY_INDEX = offset(LAYOUT, "pkey_index");
        public static final long MAX_RD_ATOMIC = offset(LAYOUT, "max_rd_atomic");
        public static final long MAX_DEST_RD_ATOMIC = offset(LAYOUT, "max_dest_rd_atomic");
        public static final long MIN_RNR_TIMER = offset(LAYOUT, "min_rnr_timer");
        public static final long PORT_NUM = offset(LAYOUT, "port_num");
        public static final long TIMEOUT = offset(LAYOUT, "timeout");
        public static final long RETRY_CNT = offset(LAYOUT, "retry_cnt");
        public static final long RNR_RETRY = offset(LAYOUT, "rnr_retry");

        private QpAttr() {
        }
    }

    /** {@code struct ibv_sge}: one scatter/gather element. */
    public static final class Sge {
        public static final StructLayout LAYOUT = structLayout(
                U64.withName("addr"),
                U32.withName("length"),
                U32.withName("lkey"))
                .withName("ibv_sge");
        public static final long SIZE = LAYOUT.byteSize();
        public static final long ADDR = offset(LAYOUT, "addr");
        public static final long LENGTH = offset(LAYOUT, "length");
        public static final long LKEY = offset(LAYOUT, "lkey");

        private Sge() {
        }
    }

    /** {@code struct ibv_send_wr}: the work request of {@code post_send}. */
    public static final class SendWr {
        private static final MemoryLayout WR = unionLayout(
                structLayout(U64.withName("remote_addr"), U32.withName("rkey"), paddingLayout(4)).withName("rdma"),
                structLayout(U64.withName("remote_addr"), U64.withName("compare_add"), U64.withName("swap"),
                        U32.withName("rkey"), paddingLayout(4)).withName("atomic"))
                .withName("wr");

        public static final StructLayout LAYOUT = structLayout(
                U64.withName("wr_id"),
                ADDRESS.withName("next"),
                ADDRESS.withName("sg_list"),
                U32.withName("num_sge"),
                U32.withName("opcode"),
                U32.withName("send_flags"),
                U32.withName("imm_data"),
                WR,
                unionLayout(structLayout(U32.withName("remote_srqn")).withName("xrc")).withName("qp_type"),
                paddingLayout(4),
                // the anonymous bind_mw / tso union, unused
                paddingLayout(48))
                .withName("ibv_send_wr");
        public static final long SIZE = LAYOUT.byteSize();
        public static final long WR_ID = offset(LAYOUT, "wr_id");
        public static final long NEXT = offset(LAYOUT, "next");
        public static final long SG_LIST = offset(LAYOUT, "sg_list");
        public static final long NUM_SGE = offset(LAYOUT, "num_sge");
        public static final long OPCODE = offset(LAYOUT, "opcode");
        public static final long SEND_FLAGS = offset(LAYOUT, "send_flags");
        public static final long IMM_DATA = offset(LAYOUT, "imm_data");
        public static final long REMOTE_ADDR = offset(LAYOUT, "wr.rdma.remote_addr");
        public static final long RKEY = offset(LAYOUT, "wr.rdma.rkey");

        private SendWr() {
        }
    }

    /** {@code struct ibv_recv_wr}: the work request of {@code post_recv}. */
    public static final class RecvWr {
        public static final StructLayout LAYOUT = structLayout(
                U64.withName("wr_id"),
                ADDRESS.withName("next"),
                ADDRESS.withName("sg_list"),
                U32.withName("num_sge"),
                paddingLayout(4))
                .withName("ibv_recv_wr");
        public static final long SIZE = LAYOUT.byteSize();
        public static final long WR_ID = offset(LAYOUT, "wr_id");
        public static final long NEXT = offset(LAYOUT, "next");
        public static final long SG_LIST = offset(LAYOUT, "sg_list");
        public static final long NUM_SGE = offset(LAYOUT, "num_sge");

        private RecvWr() {
        }
    }

    /** {@code struct ibv_wc}: one work completion, filled by {@code poll_cq}. */
    public static final class Wc {
        public static final StructLayout LAYOUT = structLayout(
                U64.withName("wr_id"),
                U32.withName("status"),
                U32.withName("opcode"),
                U32.withName("vendor_err"),
                U32.withName("byte_len"),
                U32.withName("imm_data"),
                U32.withName("qp_num"),
                U32.withName("src_qp"),
                U32.withName("wc_flags"),
                U16.withName("pkey_index"),
                U16.withName("slid"),
                U8.withName("sl"),
                U8.withName("dlid_path_bits"),
                paddingLayout(2))
                .withName("ibv_wc");
        public static final long SIZE = LAYOUT.byteSize();
        public static final long WR_ID = offset(LAYOUT, "wr_id");
        public static final long STATUS = offset(LAYOUT, "status");
        public static final long OPCODE = offset(LAYOUT, "opcode");
        public static final long VENDOR_ERR = offset(LAYOUT, "vendor_err");
        public static final long BYTE_LEN = offset(LAYOUT, "byte_len");
        public static final long IMM_DATA = offset(LAYOUT, "imm_data");
        public static final long QP_NUM = offset(LAYOUT, "qp_num");
        public static final long WC_FLAGS = offset(LAYOUT, "wc_flags");

        private Wc() {
        }
    }

    /** {@code struct ibv_mr}: a registration; the keys are what the transport needs. */
    public static final class Mr {
        public static final StructLayout LAYOUT = structLayout(
                ADDRESS.withName("context"),
                ADDRESS.withName("pd"),
                ADDRESS.withName("addr"),
                U64.withName("length"),
                U32.withName("handle"),
                U32.withName("lkey"),
                U32.withName("rkey"),
                paddingLayout(4))
                .withName("ibv_mr");
        public static final long ADDR = offset(LAYOUT, "addr");
        public static final long LENGTH = offset(LAYOUT, "length");
        public static final long LKEY = offset(LAYOUT, "lkey");
        public static final long RKEY = offset(LAYOUT, "rkey");

        private Mr() {
        }
    }

    /** {@code struct ibv_qp}: the transport reads {@code context} and {@code qp_num}. */
    public static final class Qp {
        public static final StructLayout LAYOUT = structLayout(
                ADDRESS.withName("context"),
                ADDRESS.withName("qp_context"),
                ADDRESS.withName("pd"),
                ADDRESS.withName("send_cq"),
                ADDRESS.withName("recv_cq"),
                ADDRESS.withName("srq"),
                U32.withName("handle"),
                U32.withName("qp_num"),
                U32.withName("state"),
                U32.withName("qp_type"),
                mutex("mutex"),
                cond("cond"),
                U32.withName("events_completed"),
                paddingLayout(4))
                .withName("ibv_qp");
        public static final long CONTEXT = offset(LAYOUT, "context");
        public static final long QP_NUM = offset(LAYOUT, "qp_num");

        private Qp() {
        }
    }

    /** {@code struct ibv_cq}: the transport reads {@code context}. */
    public static final class Cq {
        public static final StructLayout LAYOUT = structLayout(
                ADDRESS.withName("context"),
                ADDRESS.withName("channel"),
                ADDRESS.withName("cq_context"),
                U32.withName("handle"),
                U32.withName("cqe"),
                mutex("mutex"),
                cond("cond"),
                U32.withName("comp_events_completed"),
                U32.withName("async_events_completed"))
                .withName("ibv_cq");
        public static final long CONTEXT = offset(LAYOUT, "context");
        public static final long CQE = offset(LAYOUT, "cqe");

        private Cq() {
        }
    }

    /** {@code struct ibv_async_event}, filled by {@code ibv_get_async_event}. */
    public static final class AsyncEvent {
        public static final StructLayout LAYOUT = structLayout(
                unionLayout(ADDRESS.withName("cq"), ADDRESS.withName("qp"), U32.withName("port_num"))
                        .withName("element"),
                U32.withName("event_type"),
                paddingLayout(4))
                .withName("ibv_async_event");
        public static final long ELEMENT = offset(LAYOUT, "element");
        public static final long ELEMENT_PORT_NUM = offset(LAYOUT, "element.port_num");
        public static final long EVENT_TYPE = offset(LAYOUT, "event_type");

        private AsyncEvent() {
        }
    }

    /** {@code struct pollfd} of {@code poll.h}: the async-event thread waits on the context's fd. */
    public static final class PollFd {
        public static final StructLayout LAYOUT = structLayout(
                U32.withName("fd"),
                U16.withName("events"),
                U16.withName("revents"))
                .withName("pollfd");
        public static final long FD = offset(LAYOUT, "fd");
        public static final long EVENTS = offset(LAYOUT, "events");
        public static final long REVENTS = offset(LAYOUT, "revents");

        private PollFd() {
        }
    }

    /** @return every layout of this class, for the check against the C headers */
    public static List<GroupLayout> all() {
        return List.of(Context.LAYOUT, DeviceAttr.LAYOUT, PortAttr.LAYOUT, GidEntry.LAYOUT, QpInitAttr.LAYOUT,
                QpAttr.LAYOUT, Sge.LAYOUT, SendWr.LAYOUT, RecvWr.LAYOUT, Wc.LAYOUT, Mr.LAYOUT, Qp.LAYOUT, Cq.LAYOUT,
                AsyncEvent.LAYOUT, PollFd.LAYOUT, Gid.LAYOUT);
    }
}
