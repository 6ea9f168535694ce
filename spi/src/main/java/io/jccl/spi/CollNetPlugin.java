package io.jccl.spi;

import java.lang.foreign.MemorySegment;

/**
 * An in-network reduction transport: NCCL's {@code ncclCollNet_v6_t}, function for function.
 *
 * <p>Register with {@link java.util.ServiceLoader} as {@code io.jccl.spi.CollNetPlugin}; the
 * provider needs a public no-argument constructor that does no work.
 *
 * <h2>Life cycle</h2>
 * {@code init} &rarr; {@code devices} &rarr; {@code getProperties} &rarr; on every rank of the
 * group, {@code listen} writes a {@link NetHandle}; all ranks' handles are exchanged out of band;
 * every rank calls {@code connect} with all of them (a blocking collective), then
 * {@code closeListen} &rarr; {@code reduceSupport} per (type, op) &rarr; {@code regMr} &rarr;
 * {@code iallreduce} / {@code test} (and {@code iflush} for GPU memory) &rarr; {@code deregMr}
 * &rarr; {@code closeColl}.
 *
 * <h2>Threads and data path</h2>
 * As for {@link NetPlugin}: setup calls from a service thread, {@code iallreduce}, {@code iflush}
 * and {@code test} from a progress thread, which never block and allocate nothing. Every rank
 * issues the same sequence of {@code iallreduce} calls, in the same order.
 *
 * <h2>Errors</h2>
 * {@link NetException} with NCCL's result codes, as for {@link NetPlugin}. Unsupported
 * (type, op) pairs are refused with {@link NetResult#INVALID_ARGUMENT}.
 */
public interface CollNetPlugin extends AutoCloseable {

    /** The ncclCollNet ABI version whose contract this interface follows. */
    NetApiVersion API_VERSION = NetApiVersion.V6;

    /**
     * @return the transport's name: stable and distinct from every other transport's; any thread,
     *         never blocks, must not depend on {@link #init}
     */
    String name();

    /**
     * Initialises the transport. Application thread; may block briefly; may be called more than
     * once (later calls keep the state of the first).
     *
     * @param logger where the transport writes its log lines; never {@code null}
     * @throws NetException if the transport cannot be used on this machine
     */
    void init(NetLogger logger) throws NetException;

    /**
     * @return the number of devices; 0 disables CollNet without failing
     * @throws NetException if called before {@link #init} succeeded
     */
    int devices() throws NetException;

    /**
     * @param dev a device index in {@code [0, devices())}
     * @return the device's properties, every field filled
     * @throws NetException {@link NetResult#INVALID_ARGUMENT} for an index out of range
     */
    NetProperties getProperties(int dev) throws NetException;

    /**
     * Prepares this rank's end of a collective connection and writes what the other ranks need into
     * {@code handle}. Service thread; must not block.
     *
     * @param dev    a device index
     * @param handle a handle to fill; it is shipped to every other rank
     * @return the listen comm, never {@code null}
     * @throws NetException if the device cannot listen
     */
    ListenComm listen(int dev, NetHandle handle) throws NetException;

    /**
     * Connects all ranks into one collective communicator. <strong>Blocking</strong> and
     * collective: every rank calls it with the same handles and returns once all are connected, or
     * throws (NCCL then falls back to running without CollNet). Service thread.
     *
     * @param handles    every rank's handle, indexed by rank
     * @param rank       this rank's index in {@code handles}
     * @param listenComm this rank's comm from {@link #listen}
     * @return the collective comm
     * @throws NetException if any rank cannot be reached within the transport's timeout
     */
    CollComm connect(NetHandle[] handles, int rank, ListenComm listenComm) throws NetException;

    /**
     * Tells whether {@link #iallreduce} supports a (type, op) pair. NCCL asks for
     * {@code sum, prod, max, min} over every data type and uses CollNet for a pair only if every
     * rank says yes, so the answer must be the truth.
     *
     * @param dataType the element type
     * @param op       the reduction
     * @return whether {@code iallreduce} accepts the pair
     * @throws NetException if the question cannot be answered
     */
    boolean reduceSupport(DataType dataType, ReduceOp op) throws NetException;

    /**
     * Registers a buffer on the collective comm. Service thread; may block.
     *
     * @param comm the collective comm
     * @param data the buffer
     * @param type {@link PointerType#HOST}, or {@link PointerType#CUDA} if supported
     * @return the registration
     * @throws NetException {@link NetResult#INVALID_USAGE} for an unsupported memory type
     */
    MemoryHandle regMr(CollComm comm, MemorySegment data, PointerType type) throws NetException;

    /**
     * Registers device memory exported as a dma-buf; the default refuses.
     *
     * @param comm   the collective comm
     * @param data   the buffer's device address range
     * @param type   the memory type
     * @param offset offset of {@code data} inside the dma-buf
     * @param fd     the dma-buf file descriptor
     * @return the registration
     * @throws NetException {@link NetResult#INVALID_USAGE} if dma-buf is not supported
     */
    default MemoryHandle regMrDmaBuf(CollComm comm, MemorySegment data, PointerType type, long offset, int fd)
            throws NetException {
        throw NetException.invalidUsage(name() + " does not support dma-buf registration"
                + " (its ptrSupport lacks DMABUF)");
    }

    /**
     * Releases a registration. Service thread.
     *
     * @param comm    the collective comm
     * @param mhandle a handle from {@link #regMr} or {@link #regMrDmaBuf}
     * @throws NetException for a handle this comm did not issue, or one already released
     */
    void deregMr(CollComm comm, MemoryHandle mhandle) throws NetException;

    /**
     * Starts an all-reduce of {@code count} elements across all ranks. Progress thread; never
     * blocks; allocates nothing. Every rank issues the same calls in the same order.
     * {@code sendData} and {@code recvData} may be the same memory (in place).
     *
     * @param comm        the collective comm
     * @param sendData    at least {@code count * dataType.size()} bytes of input
     * @param recvData    at least {@code count * dataType.size()} bytes for the result
     * @param count       elements per rank; 0 is valid
     * @param dataType    the element type
     * @param op          the reduction
     * @param sendMhandle the registration covering {@code sendData}
     * @param recvMhandle the registration covering {@code recvData}
     * @return the request to {@link #test}, or {@code null} to be called again (would block)
     * @throws NetException {@link NetResult#INVALID_ARGUMENT} for a pair {@link #reduceSupport}
     *                      refuses; {@link NetResult#REMOTE_ERROR} after a rank died
     */
    NetRequest iallreduce(CollComm comm, MemorySegment sendData, MemorySegment recvData, long count,
                          DataType dataType, ReduceOp op, MemoryHandle sendMhandle, MemoryHandle recvMhandle)
            throws NetException;

    /**
     * Makes a result received into GPU memory visible to the GPU. Progress thread; never blocks.
     * {@code null} means nothing needs flushing (always so for host memory).
     *
     * @param comm    the collective comm
     * @param data    the received range
     * @param mhandle its registration
     * @return the request to {@link #test}, or {@code null} if nothing needs flushing
     * @throws NetException if the flush cannot be posted
     */
    NetRequest iflush(CollComm comm, MemorySegment data, MemoryHandle mhandle) throws NetException;

    /**
     * Polls a request and drives progress. Progress thread; never blocks; allocates nothing. After
     * {@code true} the request belongs to the transport again.
     *
     * @param request a request from {@code iallreduce} or {@code iflush}
     * @param size    {@code null}, or an array whose element 0 receives the bytes produced
     * @return {@code true} once complete
     * @throws NetException if the operation failed; the request is then complete
     */
    boolean test(NetRequest request, int[] size) throws NetException;

    /**
     * Closes a collective comm. Service thread. Safe with requests in flight: they fail, nothing
     * leaks.
     *
     * @param comm the comm; not used again afterwards
     * @throws NetException if releasing resources failed (the comm is closed regardless)
     */
    void closeColl(CollComm comm) throws NetException;

    /**
     * Closes a listen comm. Service thread.
     *
     * @param comm the comm; not used again afterwards
     * @throws NetException if releasing resources failed (the comm is closed regardless)
     */
    void closeListen(ListenComm comm) throws NetException;

    /**
     * Releases what {@link #init} acquired, once no comm is open any more. The default does
     * nothing.
     *
     * @throws NetException if releasing resources failed
     */
    @Override
    default void close() throws NetException {
    }
}
