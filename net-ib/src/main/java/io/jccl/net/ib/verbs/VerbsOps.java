package io.jccl.net.ib.verbs;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The data-path verbs: {@code ibv_post_send}, {@code ibv_post_recv} and {@code ibv_poll_cq} are
 * {@code static inline} in {@code verbs.h} and call the provider through
 * {@code context->ops}; so does this class, with the function pointers read once per context
 * ({@link #functions}).
 *
 * <p>The handles are {@linkplain Linker.Option#critical critical}: these calls never block for
 * long and never call back into Java, so they skip the thread-state transition that an ordinary
 * downcall pays. They take no {@code errno} capture: each returns its error number. Nothing here
 * allocates.
 */
@SuppressWarnings("restricted") // the binding of the inline verbs
public final class VerbsOps {
    private static final Linker LINKER = Linker.nativeLinker();

    /** {@code int (*poll_cq)(struct ibv_cq *, int, struct ibv_wc *)}. */
    private static final MethodHandle POLL_CQ = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), Linker.Option.critical(false));
    /** {@code int (*post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **)}. */
    private static final MethodHandle POST_SEND = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), Linker.Option.critical(false));
    /** {@code int (*post_recv)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **)}. */
    private static final MethodHandle POST_RECV = LINKER.downcallHandle(
            FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS), Linker.Option.critical(false));

    private VerbsOps() {
    }

    /** The provider's data-path functions of one context. */
    public record Functions(MemorySegment pollCq, MemorySegment postSend, MemorySegment postRecv) {
    }

    /**
     * @param context an open {@code struct ibv_context}
     * @return its {@code ops.poll_cq}, {@code ops.post_send} and {@code ops.post_recv}
     */
    public static Functions functions(MemorySegment context) {
        MemorySegment ctx = context.reinterpret(IbvLayouts.Context.LAYOUT.byteSize());
        return new Functions(ctx.get(ADDRESS, IbvLayouts.Context.OPS_POLL_CQ),
                ctx.get(ADDRESS, IbvLayouts.Context.OPS_POST_SEND),
                ctx.get(ADDRESS, IbvLayouts.Context.OPS_POST_RECV));
    }

    /**
     * @return the number of completions written to {@code wc} (0 if none), or a negative value on
     *         error
     */
    public static int pollCq(MemorySegment fn, MemorySegment cq, int max, MemorySegment wc) {
        try {
            return (int) POLL_CQ.invokeExact(fn, cq, max, wc);
        } catch (Throwable t) {
            throw new IllegalStateException("poll_cq", t);
        }
    }

    /** @return 0, or the error number (e.g. ENOMEM when the send queue is full) */
    public static int postSend(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            return (int) POST_SEND.invokeExact(fn, qp, wr, badWr);
        } catch (Throwable t) {
            throw new IllegalStateException("post_send", t);
        }
    }

    /** @return 0, or the error number */
    public static int postRecv(MemorySegment fn, MemorySegment qp, MemorySegment wr, MemorySegment badWr) {
        try {
            return (int) POST_RECV.invokeExact(fn, qp, wr, badWr);
        } catch (Throwable t) {
            throw new IllegalStateException("post_recv", t);
        }
    }
}
