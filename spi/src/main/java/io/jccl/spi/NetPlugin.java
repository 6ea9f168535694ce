package io.jccl.spi;

import java.lang.foreign.MemorySegment;

/**
 * A point-to-point network transport: NCCL's {@code ncclNet_v6_t}, function for function.
 *
 * <p>Register an implementation with {@link java.util.ServiceLoader} ({@code provides
 * io.jccl.spi.NetPlugin with ...} in {@code module-info}, or {@code
 * META-INF/services/io.jccl.spi.NetPlugin} on the class path). It needs a public no-argument
 * constructor that does no work: discovery instantiates every provider, and only calls
 * {@link #init} on the ones it considers.
 *
 * <h2>Life cycle</h2>
 * {@code init} &rarr; {@code devices} &rarr; {@code getProperties} per device &rarr; per connection:
 * the receiver {@code listen}s, the 128-byte {@link NetHandle} travels to the sender out of band,
 * the sender {@code connect}s (called again until it returns a comm), the receiver {@code accept}s
 * (likewise) &rarr; {@code regMr} on buffers &rarr; {@code isend} / {@code irecv} / {@code test}
 * (and {@code iflush} for GPU memory) &rarr; {@code deregMr} &rarr; {@code closeSend} /
 * {@code closeRecv} / {@code closeListen}.
 *
 * <h2>Threads</h2>
 * Following NCCL (spec 5.16): {@code init}, {@code devices} and {@code getProperties} come from an
 * application thread; {@code listen}, {@code connect}, {@code accept}, {@code regMr},
 * {@code deregMr} and the {@code close} calls from a setup ("service") thread; {@code isend},
 * {@code irecv}, {@code iflush} and {@code test} from a progress ("proxy") thread. Several
 * communicators, each with its own threads, share one plugin, so global state must be thread-safe.
 * A given comm is used by one thread at a time, and a request is tested by one thread.
 *
 * <h2>Data path</h2>
 * {@code isend}, {@code irecv}, {@code iflush} and {@code test} never block and must be
 * implementable without allocating per call: requests come from a pool owned by the comm, sizes go
 * into the caller's array, and normal states are return values ({@code null} = would block,
 * {@code false} = not done). Progress happens inside {@code test}; NCCL provides no other hook,
 * though a transport may also run its own threads.
 *
 * <h2>Errors</h2>
 * Every method may throw {@link NetException} with NCCL's result code:
 * {@link NetResult#SYSTEM_ERROR} for system or network failures, {@link NetResult#REMOTE_ERROR}
 * when the peer closed or died, {@link NetResult#INVALID_USAGE} for a size mismatch or
 * misconfiguration, {@link NetResult#INTERNAL_ERROR} for misuse such as too many requests in
 * flight, {@link NetResult#INVALID_ARGUMENT} for malformed arguments such as a garbage handle. A
 * failed data call fails the request, never the process: once a peer dies, every pending request
 * of the comm completes with an exception from {@code test} within a bounded time.
 */
public interface NetPlugin extends AutoCloseable {

    /** The ncclNet ABI version whose contract this interface follows. */
    NetApiVersion API_VERSION = NetApiVersion.V6;

    /**
     * Requests in flight that every send comm and every receive comm must accept
     * ({@code NCCL_NET_MAX_REQUESTS} of NCCL 2.19 and later; v6-era NCCL used 8).
     */
    int MAX_REQUESTS = 32;

    /**
     * The transport's name: stable, matched case-insensitively by {@code NCCL_NET}, and distinct
     * from NCCL's internal {@code IB} and {@code Socket}.
     *
     * <p>Any thread; never blocks; must not depend on {@link #init}.
     *
     * @return the name, e.g. {@code JcclSocket}
     */
    String name();

    /**
     * Initialises the transport: finds its devices and checks that it can run here.
     *
     * <p>Application thread; may block briefly (device discovery). May be called more than once
     * (NCCL 2.28 and later call it per communicator): later calls keep the state of the first and
     * may replace the logger. A transport that cannot work here (no usable device, hardware
     * missing) throws, so that discovery moves on to the next transport.
     *
     * @param logger where the transport writes its log lines; never {@code null}
     * @throws NetException if the transport cannot be used on this machine
     */
    void init(NetLogger logger) throws NetException;

    /**
     * @return the number of devices, at least 1 after a successful {@link #init}
     * @throws NetException if called before {@link #init} succeeded
     */
    int devices() throws NetException;

    /**
     * Describes one device. Application or setup thread; never blocks.
     *
     * @param dev a device index in {@code [0, devices())}
     * @return the device's properties, every field filled
     * @throws NetException {@link NetResult#INVALID_ARGUMENT} for an index out of range
     */
    NetProperties getProperties(int dev) throws NetException;

    /**
     * Starts listening for connections on a device and writes what a peer needs to connect
     * (address, secret) into {@code handle}.
     *
     * <p>Setup thread; must not block. The listen comm accepts any number of connections until it
     * is closed.
     *
     * @param dev    a device index
     * @param handle a handle to fill; its {@link NetHandle#SIZE} bytes are shipped to the peer
     * @return the listen comm, never {@code null}
     * @throws NetException if the device cannot listen (e.g. {@link NetResult#SYSTEM_ERROR} when
     *                      binding fails)
     */
    ListenComm listen(int dev, NetHandle handle) throws NetException;

    /**
     * Connects to a peer's listen comm, without blocking.
     *
     * <p>Setup thread. Returns {@code null} while the connection is being established; the caller
     * calls again with the <em>same</em> {@code handle} object until a comm comes back. The
     * transport may keep resume state in the handle's bytes or in its own tables.
     *
     * @param dev    the local device to connect from
     * @param handle the peer's handle, as its {@code listen} wrote it
     * @return the send comm, or {@code null} to be called again
     * @throws NetException {@link NetResult#INVALID_ARGUMENT} for a handle this transport did not
     *                      write; {@link NetResult#SYSTEM_ERROR} or {@link NetResult#REMOTE_ERROR}
     *                      if the connection fails or times out
     */
    SendComm connect(int dev, NetHandle handle) throws NetException;

    /**
     * Accepts the next connection on a listen comm, without blocking.
     *
     * <p>Setup thread. Returns {@code null} until a peer has connected; the caller calls again.
     * Stray, garbage or unauthenticated connections are dropped (and logged) here without
     * disturbing genuine ones.
     *
     * @param listenComm a comm from {@link #listen}
     * @return the receive comm, or {@code null} to be called again
     * @throws NetException if the listen comm is closed or broken
     */
    RecvComm accept(ListenComm listenComm) throws NetException;

    /**
     * Registers a buffer for use with {@code isend}, {@code irecv} and {@code iflush} on this comm.
     *
     * <p>Setup thread; may block (pinning memory). A transport may register whole buffers once and
     * then accept any sub-range of them in data calls.
     *
     * @param comm a send or receive comm of this transport
     * @param data the buffer; for {@link PointerType#CUDA} a segment holding a device address
     * @param type {@link PointerType#HOST}, or {@link PointerType#CUDA} if {@code ptrSupport} has it
     * @return the registration, passed back to data calls and to {@link #deregMr}
     * @throws NetException {@link NetResult#INVALID_USAGE} for a memory type the device does not
     *                      support (e.g. CUDA on a host-only transport)
     */
    MemoryHandle regMr(NetComm comm, MemorySegment data, PointerType type) throws NetException;

    /**
     * Registers device memory exported as a dma-buf. Only called when {@code ptrSupport} includes
     * {@link PointerType#DMABUF}; the default refuses.
     *
     * @param comm   a send or receive comm of this transport
     * @param data   the buffer's device address range
     * @param type   the memory type, normally {@link PointerType#CUDA}
     * @param offset offset of {@code data} inside the dma-buf
     * @param fd     the dma-buf file descriptor
     * @return the registration
     * @throws NetException {@link NetResult#INVALID_USAGE} if dma-buf is not supported
     */
    default MemoryHandle regMrDmaBuf(NetComm comm, MemorySegment data, PointerType type, long offset, int fd)
            throws NetException {
        throw NetException.invalidUsage(name() + " does not support dma-buf registration"
                + " (its ptrSupport lacks DMABUF)");
    }

    /**
     * Releases a registration. Setup thread.
     *
     * @param comm    the comm it was registered on
     * @param mhandle a handle from {@link #regMr} or {@link #regMrDmaBuf}
     * @throws NetException {@link NetResult#INVALID_ARGUMENT} or {@link NetResult#INTERNAL_ERROR}
     *                      for a handle this comm did not issue, or one already released
     */
    void deregMr(NetComm comm, MemoryHandle mhandle) throws NetException;

    /**
     * Starts sending one buffer.
     *
     * <p>Progress thread; never blocks; allocates nothing. Sends and receives on a connection match
     * in posting order; zero-byte messages are valid. If the send cannot start now (the receiver has
     * not posted a matching receive, or all request slots are busy) the transport returns
     * {@code null} and the caller tries again later.
     *
     * @param comm    a send comm
     * @param data    the bytes to send: {@code data.byteSize()} is the message size
     * @param tag     selects the buffer of a grouped receive (NCCL passes the sender's rank)
     * @param mhandle the registration covering {@code data}
     * @return the request to {@link #test}, or {@code null} to be called again
     * @throws NetException if the comm has failed, e.g. {@link NetResult#REMOTE_ERROR} after the
     *                      peer died
     */
    NetRequest isend(SendComm comm, MemorySegment data, int tag, MemoryHandle mhandle) throws NetException;

    /**
     * Posts a grouped receive of {@code n} buffers, all completing through one request.
     *
     * <p>Progress thread; never blocks; allocates nothing. The transport copies what it needs from
     * the arrays before returning, so the caller may reuse them. Each incoming send lands in the
     * buffer of the first pending receive whose tag matches; receives complete in posting order. A
     * buffer may be larger than the message (the real size is reported by {@link #test}); a message
     * larger than its buffer fails the request on both sides, it is never truncated silently.
     *
     * @param comm     a receive comm
     * @param n        the number of buffers, {@code 1 <= n <= maxRecvs}
     * @param data     {@code data[i].byteSize()} is the capacity of buffer {@code i}
     * @param tags     {@code tags[i]} is the tag buffer {@code i} accepts
     * @param mhandles {@code mhandles[i]} is the registration covering {@code data[i]}
     * @return the request to {@link #test}, or {@code null} to be called again
     * @throws NetException {@link NetResult#INTERNAL_ERROR} if {@code n} exceeds {@code maxRecvs};
     *                      {@link NetResult#REMOTE_ERROR} after the peer died
     */
    NetRequest irecv(RecvComm comm, int n, MemorySegment[] data, int[] tags, MemoryHandle[] mhandles)
            throws NetException;

    /**
     * Makes data received into GPU memory visible to the GPU (e.g. by a PCIe read). Only called for
     * device memory after a receive completed with a non-zero size.
     *
     * <p>Progress thread; never blocks. Unlike {@link #isend}, {@code null} here means there is
     * nothing to flush: the flush is already complete. Host-only transports return {@code null}.
     *
     * @param comm     the receive comm
     * @param n        the number of buffers of the completed receive
     * @param data     the received ranges ({@code byteSize()} = bytes received)
     * @param mhandles their registrations
     * @return the request to {@link #test}, or {@code null} if nothing needs flushing
     * @throws NetException if the flush cannot be posted
     */
    NetRequest iflush(RecvComm comm, int n, MemorySegment[] data, MemoryHandle[] mhandles) throws NetException;

    /**
     * Polls a request and drives progress.
     *
     * <p>Progress thread; never blocks; allocates nothing. When it returns {@code true} the request
     * is complete and belongs to the transport again: the caller must not test it again.
     *
     * @param request a request returned by {@code isend}, {@code irecv} or {@code iflush}
     * @param sizes   {@code null}, or an array that receives the bytes actually transferred: one
     *                entry for a send, one per buffer for a grouped receive
     * @return {@code true} once complete, {@code false} while in flight
     * @throws NetException if the request failed: {@link NetResult#REMOTE_ERROR} when the peer
     *                      closed or died, {@link NetResult#INVALID_USAGE} when a message was larger
     *                      than its receive buffer; the request is then complete
     */
    boolean test(NetRequest request, int[] sizes) throws NetException;

    /**
     * Closes a send comm. Setup thread. Safe with requests in flight: they fail, nothing leaks, and
     * the peer's pending requests fail too.
     *
     * @param comm the comm; not used again afterwards
     * @throws NetException if releasing resources failed (the comm is closed regardless)
     */
    void closeSend(SendComm comm) throws NetException;

    /**
     * Closes a receive comm. Setup thread. Safe with requests in flight.
     *
     * @param comm the comm; not used again afterwards
     * @throws NetException if releasing resources failed (the comm is closed regardless)
     */
    void closeRecv(RecvComm comm) throws NetException;

    /**
     * Closes a listen comm. Setup thread. Connections already accepted stay open; connections not
     * yet accepted are dropped.
     *
     * @param comm the comm; not used again afterwards
     * @throws NetException if releasing resources failed (the listen comm is closed regardless)
     */
    void closeListen(ListenComm comm) throws NetException;

    /**
     * Releases what {@link #init} acquired (NCCL v11's {@code finalize} of the last context).
     * Called once no comm of this plugin is open any more; {@link #init} may follow again. The
     * default does nothing.
     *
     * @throws NetException if releasing resources failed
     */
    @Override
    default void close() throws NetException {
    }
}
