package io.jccl.tck;

import io.jccl.spi.NetException;
import io.jccl.spi.NetPlugin;
import io.jccl.spi.config.Env;
import io.jccl.tck.PreconditionFailure.Precondition;
import io.jccl.tck.internal.RecordingLogger;
import io.jccl.tck.internal.net.ConnectionChecks;
import io.jccl.tck.internal.net.FaultChecks;
import io.jccl.tck.internal.net.LifecycleChecks;
import io.jccl.tck.internal.net.NetKit;
import io.jccl.tck.internal.net.TransferChecks;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Optional;
import java.util.function.Function;

import static io.jccl.tck.RuleLevel.OPTIONAL;
import static io.jccl.tck.RuleLevel.REQUIRED;

/**
 * The conformance rules of a point-to-point transport ({@link NetPlugin}, ncclNet): extend this
 * class in a test of your build and return your transport from {@link #createPlugin()}.
 *
 * <pre>{@code
 * class MyTransportConformanceTest extends NetPluginTck {
 *     @Override
 *     protected NetPlugin createPlugin() {
 *         return new MyTransport();
 *     }
 * }
 * }</pre>
 *
 * <p>Every rule is a test method named after its rule ({@code required_conn_3_...}) and annotated
 * with {@link TckRule}: its id, its level and "If this fails, check ...". Rules run in order of
 * area ({@code life}, {@code conn}, {@code xfer}, {@code fault}), against one instance of the
 * transport initialised once; each rule opens and closes its own connections on device 0, both
 * ends in this JVM and driven from one thread, as NCCL's proxy may for a loopback connection.
 * Rule {@code fault.2} also starts a second JVM (same class path) that holds the other end and is
 * then killed.
 *
 * <p>Rule methods are public so that a kit class can override one, for instance to skip a rule
 * that does not apply with {@code Assumptions.abort("why")}; the override keeps the rule's id.
 *
 * <p>Rules whose capability the transport lacks (grouped receives where maxRecvs = 1, a TCP
 * listener for the stray-connection rule) are skipped with the reason, not failed. A transport
 * that cannot run here (hardware missing) should be skipped as a whole from
 * {@link #createPlugin()} with a JUnit assumption that gives its {@code unavailabilityCause()}.
 * Before the first rule the kit checks what NCCL does before any connection: {@code init}
 * succeeds ({@code pre.1}), {@code devices()} is at least 1 ({@code pre.2}), {@code getProperties}
 * succeeds for every device ({@code pre.3}); a transport that fails one gets that one verdict,
 * a {@link PreconditionFailure}, and no rule runs.
 *
 * <p>Timeouts and sizes come from {@link #settings()} (by default the {@link TckConfig}
 * variables); a slow transport raises {@code JCCL_TCK_TIMEOUT_SCALE} rather than editing rules.
 * A failed rule's message carries the rule's id, its hint and the transport's log lines of that
 * rule; set {@code NCCL_DEBUG} to see the transport's log as it runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(RuleOrder.class)
@DisplayNameGeneration(RuleDisplayNames.class)
@ExtendWith(KitExtension.class)
public abstract class NetPluginTck {
    private Function<String, String> parameters = key -> null;
    private TckSettings settings;
    private RecordingLogger logger;
    private NetPlugin plugin;
    private NetKit kit;

    /**
     * @return a new, uninitialised instance of the transport under test; the kit calls
     *         {@code init} itself, and {@code close} after the last rule
     * @throws Exception if it cannot be created; a JUnit assumption failure skips every rule
     */
    protected abstract NetPlugin createPlugin() throws Exception;

    /** @return the kit's timeouts and sizes; by default from the {@link TckConfig} variables */
    protected TckSettings settings() {
        return TckSettings.from(this::configurationParameter);
    }

    /**
     * @return how the peer JVM of rule {@code fault.2} obtains the same transport; empty skips that
     *         rule. By default: the transport's class if it is public with a public no-argument
     *         constructor, else its name through ServiceLoader discovery.
     */
    protected Optional<PeerTransport> peerTransport() {
        return PeerTransport.sameAs(plugin);
    }

    /**
     * @return a JUnit configuration parameter (as {@code jccl tck} passes them), else the system
     *         property or environment variable of that name, else {@code null}
     */
    protected final String configurationParameter(String key) {
        String v = parameters.apply(key);
        return v != null ? v : Env.get(key);
    }

    /** @return the transport under test, initialised; valid from the first rule on */
    protected final NetPlugin plugin() {
        return plugin;
    }

    final void useParameters(Function<String, String> lookup) {
        this.parameters = lookup;
    }

    final TckSettings kitSettings() {
        return settings;
    }

    final RecordingLogger kitLogger() {
        return logger;
    }

    @BeforeAll
    final void setUpTransportUnderTest() throws Exception {
        settings = settings();
        logger = RecordingLogger.forKit();
        plugin = createPlugin();
        if (plugin == null) {
            throw new IllegalStateException(getClass().getName() + ".createPlugin() returned null");
        }
        checkPreconditions(plugin, logger);
        kit = new NetKit(plugin, settings);
    }

    /**
     * The set-up NCCL performs before any connection (spec 4.3): init, devices, the properties of
     * every device. A transport that fails it gets one verdict, a {@link PreconditionFailure},
     * rather than every rule failing for the same reason.
     */
    private static void checkPreconditions(NetPlugin plugin, RecordingLogger logger) throws PreconditionFailure {
        String name = plugin.name();
        try {
            plugin.init(logger);
        } catch (NetException e) {
            throw new PreconditionFailure(Precondition.INIT, name, "init threw " + e.result().ncclName() + ": "
                    + e.getMessage(), e);
        }
        int devices;
        try {
            devices = plugin.devices();
        } catch (NetException e) {
            throw new PreconditionFailure(Precondition.DEVICES, name, "devices() threw " + e.result().ncclName() + ": "
                    + e.getMessage(), e);
        }
        if (devices < 1) {
            throw new PreconditionFailure(Precondition.DEVICES, name, devices + " devices after init, and NCCL uses no "
                    + "transport without devices", null);
        }
        for (int dev = 0; dev < devices; dev++) {
            try {
                plugin.getProperties(dev);
            } catch (NetException e) {
                throw new PreconditionFailure(Precondition.PROPERTIES, name, "getProperties(" + dev + ") threw "
                        + e.result().ncclName() + ": " + e.getMessage(), e);
            }
        }
    }

    @AfterAll
    final void tearDownTransportUnderTest() throws Exception {
        if (plugin != null) {
            plugin.close();
        }
    }

    private LifecycleChecks life() {
        return new LifecycleChecks(kit);
    }

    private ConnectionChecks conn() {
        return new ConnectionChecks(kit);
    }

    private TransferChecks xfer() {
        return new TransferChecks(kit);
    }

    private FaultChecks fault() {
        return new FaultChecks(kit);
    }

    // ---------------------------------------------------------------------------------------------
    // life: life cycle and properties (spec 5.3)

    /** A second {@code init} succeeds and changes neither the devices nor their properties. */
    @Test
    @TckRule(id = "life.1", level = REQUIRED, hint = "init must be idempotent: a second call keeps what the first found "
            + "(set discovery results once; do not reopen devices or reset tables). NCCL 2.28+ calls init once per "
            + "communicator.")
    public void required_life_1_initMayBeCalledTwice() throws Exception {
        life().initTwice(logger);
    }

    /** {@code devices()} is at least 1 after a successful {@code init}. */
    @Test
    @TckRule(id = "life.2", level = REQUIRED, hint = "devices() after init; with no usable device init itself must "
            + "throw, so that NCCL falls back to the next network (spec 5.3).")
    public void required_life_2_devicesAtLeastOne() throws Exception {
        life().devicesAtLeastOne();
    }

    /** Every device has a non-blank name, and no two devices share one. */
    @Test
    @TckRule(id = "life.3", level = REQUIRED, hint = "getProperties(dev).name(): NCCL keys its topology by it; include "
            + "the port or index (e.g. mlx5_0:1, eth0).")
    public void required_life_3_deviceNamesAreUnique() throws Exception {
        life().deviceNamesUnique();
    }

    /** Speed, maxComms, maxRecvs, latency and the size limits of every device are in range. */
    @Test
    @TckRule(id = "life.4", level = REQUIRED, hint = "speedMbps is in Mbps (100000 = 100 Gb/s) and > 0; maxComms and "
            + "maxRecvs >= 1; latency >= 0; maxP2pBytes and maxCollBytes in (0, 1 TiB]. NetProperties.builder(name) "
            + "starts from NCCL's defaults.")
    public void required_life_4_propertiesAreSane() throws Exception {
        life().propertiesInRange();
    }

    /** Every device's {@code ptrSupport} includes HOST and only NCCL's bits. */
    @Test
    @TckRule(id = "life.5", level = REQUIRED, hint = "ptrSupport = PointerType.maskOf(HOST, ...): HOST is mandatory, "
            + "CUDA only with GPUDirect, DMABUF only with regMrDmaBuf.")
    public void required_life_5_ptrSupportIncludesHost() throws Exception {
        life().hostPointers();
    }

    /** {@code getProperties} of a device out of range fails with ncclInvalidArgument. */
    @Test
    @TckRule(id = "life.6", level = OPTIONAL, hint = "the bounds check in getProperties: throw "
            + "NetException.invalidArgument for dev < 0 or dev >= devices().",
            beyondNccl = "NCCL passes getProperties only indices below devices() (README: it queries \"properties "
                    + "for each available network device\"); the bounds check guards against other callers.")
    public void optional_life_6_propertiesOfAnUnknownDeviceAreRefused() throws Exception {
        life().propertiesOutOfRange();
    }

    /** {@code name()} is a stable token that NCCL_NET can select, distinct from NCCL's own transports. */
    @Test
    @TckRule(id = "life.7", level = REQUIRED, hint = "name() returns a constant without spaces, other than 'IB' and "
            + "'Socket' (NCCL's internal transports, which NCCL_NET would pick instead).",
            beyondNccl = "README asks only for \"a character string with the name of the network plugin\", used for "
                    + "logs and matched by NCCL_NET; JCCL asks for a plain token that NCCL_NET can select without "
                    + "quoting and that does not shadow NCCL's own IB and Socket.")
    public void required_life_7_nameIsAStableToken() throws Exception {
        life().nameIsUsable();
    }

    // ---------------------------------------------------------------------------------------------
    // conn: connection set-up (spec 5.5 to 5.7)

    /** {@code listen} returns within the call bound and writes a handle, distinct per listen comm. */
    @Test
    @TckRule(id = "conn.1", level = REQUIRED, hint = "listen must bind and return at once (no accept loop, no lookups "
            + "that can hang) and write its address and secret into the handle; two listen comms need different "
            + "handles.")
    public void required_conn_1_listenDoesNotBlockAndWritesAHandle() throws Exception {
        conn().listenDoesNotBlock();
    }

    /**
     * With connect and accept called in turn on one thread, every call returns within the call bound
     * and the pair completes by polling.
     */
    @Test
    @TckRule(id = "conn.2", level = REQUIRED, hint = "connect and accept must return null while the handshake is in "
            + "progress and resume on the next call (state in the handle or a table). A connect that waits for the "
            + "peer's accept deadlocks NCCL's service thread on loopback connections.")
    public void required_conn_2_connectAndAcceptNeverBlock() throws Exception {
        conn().connectAndAcceptDoNotBlock();
    }

    /** One listen comm accepts eight connections in turn, each of which carries its own data. */
    @Test
    @TckRule(id = "conn.3", level = REQUIRED, hint = "accept must keep the listening socket open and hand out one comm "
            + "per connection; per-connection state must not live in the listen comm.")
    public void required_conn_3_oneListenCommServesManyConnections() throws Exception {
        conn().oneListenCommServesMany();
    }

    /** Four threads set up connections (listen, connect, accept) at the same time. */
    @Test
    @TckRule(id = "conn.4", level = REQUIRED, hint = "global state (device tables, comm registries, id counters) must be "
            + "thread-safe: NCCL runs one service thread per communicator, all in one process.")
    public void required_conn_4_connectionsSetUpFromSeveralThreadsAtOnce() throws Exception {
        conn().concurrentSetups();
    }

    /** Four threads connect to one listen comm at once; each connection is accepted exactly once. */
    @Test
    @TckRule(id = "conn.5", level = REQUIRED, hint = "accept must pair every incoming connection with its own comm even "
            + "when handshakes from several peers interleave on one listener.")
    public void required_conn_5_concurrentConnectsToOneListenComm() throws Exception {
        conn().concurrentConnectsToOneListener();
    }

    /** A handle rebuilt from its 128 bytes connects like the original. */
    @Test
    @TckRule(id = "conn.6", level = REQUIRED, hint = "the handle must be self-contained bytes: no pointers into this "
            + "process, nothing keyed by the NetHandle object's identity (NCCL ships the bytes to another process).")
    public void required_conn_6_aHandleCopiedByteForByteConnects() throws Exception {
        conn().copiedHandleConnects();
    }

    /** A connection keeps working after its listen comm is closed. */
    @Test
    @TckRule(id = "conn.7", level = REQUIRED, hint = "closeListen must close only the listening socket, not the comms it "
            + "accepted: NCCL closes the listen comm right after accept (spec 5.5).")
    public void required_conn_7_acceptedConnectionsOutliveTheListenComm() throws Exception {
        conn().acceptedConnectionsOutliveTheListenComm();
    }

    /**
     * Connecting to a listener that was closed fails with a NetException within the connect
     * timeout: at connect, or, for a transport that connects lazily, at the first send.
     */
    @Test
    @TckRule(id = "conn.8", level = OPTIONAL, hint = "a refused connection must become a NetException after a bounded "
            + "number of retries, not an endless null. NCCL's own socket transport retries for about a minute "
            + "(NCCL_SOCKET_RETRY_CNT x NCCL_SOCKET_RETRY_SLEEP_MSEC); shorten such retries below "
            + "JCCL_TCK_CONNECT_TIMEOUT_MS for this rule.",
            beyondNccl = "README says nothing of refused connections; JCCL asks that a connect to a listener that "
                    + "is gone end in an error rather than retry for ever.")
    public void optional_conn_8_connectToAClosedListenerFails() throws Exception {
        conn().connectToClosedListenerFails();
    }

    /** Connecting with an all-zero handle fails with a NetException, without blocking or crashing. */
    @Test
    @TckRule(id = "conn.9", level = REQUIRED, hint = "validate the handle (magic, address family, port) before "
            + "connecting; a handle no listen wrote must fail with a NetException.",
            beyondNccl = "NCCL passes connect only handles that listen wrote; JCCL asks that anything else be "
                    + "refused, since a handle arrives from another process.")
    public void required_conn_9_aGarbageHandleIsRefused() throws Exception {
        conn().garbageHandleIsRefused();
    }

    // ---------------------------------------------------------------------------------------------
    // xfer: data transfer (spec 5.8 to 5.12, 5.16)

    /**
     * 64 messages, small and large in turn, eight in flight into receives of one slot size, arrive
     * in posting order, every byte checked.
     */
    @Test
    @TckRule(id = "xfer.1", level = REQUIRED, hint = "sends and receives on a connection match in posting order (spec "
            + "5.10); with several in flight, transports that spread messages over sockets, QPs or threads must "
            + "complete them in order.")
    public void required_xfer_1_messagesArriveInPostingOrder() throws Exception {
        xfer().messagesArriveInOrder();
    }

    /** Sizes 0, 1, odd sizes and every power of two up to 256 MiB arrive intact, with exact sizes. */
    @Test
    @TckRule(id = "xfer.2", level = REQUIRED, hint = "zero-byte messages; sizes that are not a multiple of 4 or 8; "
            + "messages larger than internal chunks or socket buffers (partial reads and writes, chunk loops); int "
            + "overflow in size arithmetic.")
    public void required_xfer_2_everySizeArrivesIntact() throws Exception {
        xfer().everySizeArrivesIntact();
    }

    /** A receive larger than its message reports the message's size. */
    @Test
    @TckRule(id = "xfer.3", level = REQUIRED, hint = "test must report the bytes the send carried in sizes[i], not the "
            + "posted capacity; the sender has to transmit the size (NCCL's socket transport sends it first).")
    public void required_xfer_3_aLargerReceiveReportsTheRealSize() throws Exception {
        xfer().largerReceiveReportsRealSize();
    }

    /** A send larger than its receive fails the receive (ncclInvalidUsage) and the send; nothing is truncated. */
    @Test
    @TckRule(id = "xfer.4", level = REQUIRED, hint = "compare the incoming size with the posted capacity: fail the "
            + "receive with NetException.invalidUsage and make the sender's request fail too; never truncate.")
    public void required_xfer_4_aSendLargerThanItsReceiveFails() throws Exception {
        xfer().sendLargerThanReceiveFails();
    }

    /** 32 receives and 32 sends (NetPlugin.MAX_REQUESTS) are in flight on one connection at once. */
    @Test
    @TckRule(id = "xfer.5", level = REQUIRED, hint = "request pools and completion rings must hold "
            + "NetPlugin.MAX_REQUESTS (32) per comm; v6-era plugins sized them for 8 and lose or refuse the rest.")
    public void required_xfer_5_maxRequestsInFlight() throws Exception {
        xfer().maxRequestsInFlight();
    }

    /** A send posted before its receive, retried while it returns null, is delivered exactly once. */
    @Test
    @TckRule(id = "xfer.6", level = REQUIRED, hint = "when isend or irecv returns null, nothing may be queued: the retry "
            + "with the same arguments is the real post.")
    public void required_xfer_6_aWouldBlockSendIsRetriedAndDeliveredOnce() throws Exception {
        xfer().wouldBlockIsRetriedAndDeliveredOnce();
    }

    /** Sends land in the buffer of a grouped receive whose tag they carry (where maxRecvs &gt; 1). */
    @Test
    @TckRule(id = "xfer.7", level = REQUIRED, hint = "each send lands in the buffer of the first pending receive whose "
            + "tag matches; test reports one size per buffer. Skipped where maxRecvs = 1.")
    public void required_xfer_7_groupedReceivesMatchSendsByTag() throws Exception {
        xfer().groupedReceivesRouteByTag();
    }

    /** {@code iflush} after a host-memory receive returns null or a request that completes. */
    @Test
    @TckRule(id = "xfer.8", level = REQUIRED, hint = "host-only transports return null from iflush; others return a "
            + "request that test(request, null) completes.")
    public void required_xfer_8_iflushOfAHostReceiveIsHarmless() throws Exception {
        xfer().hostFlushIsHarmless();
    }

    /**
     * {@code regMr}/{@code deregMr} pair up over hundreds of cycles and overlapping ranges, and a
     * registration covers sends and receives at any offset inside its buffer.
     */
    @Test
    @TckRule(id = "xfer.9", level = REQUIRED, hint = "regMr/deregMr must balance (no leaked pins or table entries) and "
            + "a registration must cover any sub-range at any alignment: NCCL registers buffers once and sends "
            + "slices of them.")
    public void required_xfer_9_registrationsPairUpAndCoverSubRanges() throws Exception {
        xfer().registrationsPairUp();
    }

    /** {@code regMr} of CUDA memory on a device without CUDA support fails with ncclInvalidUsage. */
    @Test
    @TckRule(id = "xfer.10", level = OPTIONAL, hint = "regMr must check the type against ptrSupport and throw "
            + "NetException.invalidUsage for a type the device does not support.",
            beyondNccl = "NCCL registers memory of a type only if the device's ptrSupport has it (README, regMr: "
                    + "NCCL_PTR_CUDA \"if the network supports CUDA pointers\"); JCCL asks that other types be "
                    + "refused.")
    public void optional_xfer_10_cudaRegistrationIsRefusedWithoutCuda() throws Exception {
        xfer().cudaRegistrationRefusedWithoutCuda();
    }

    /** Up to 16 connections carry interleaved traffic at once, none mixing with another. */
    @Test
    @TckRule(id = "xfer.11", level = REQUIRED, hint = "per-comm state must be per comm (no static buffers, request pools "
            + "or sequence numbers shared between comms) and progress on one comm must not starve another.")
    public void required_xfer_11_manyCommsAtOnce() throws Exception {
        xfer().manyCommsAtOnce();
    }

    /** Thousands of messages of random sizes and capacities over three connections, every byte checked. */
    @Test
    @TckRule(id = "xfer.12", level = REQUIRED, hint = "rerun with the printed seed (JCCL_TCK_SEED) to reproduce; look "
            + "at chunking, partial reads, reuse of a request after completion and wrap-around of request slots.")
    public void required_xfer_12_randomSizeStress() throws Exception {
        xfer().randomStress();
    }

    // ---------------------------------------------------------------------------------------------
    // fault: failures and misuse (NetPlugin: Errors)

    /**
     * Closing either end with requests in flight returns, and the other end's pending requests
     * complete (with an error) within the peer-death bound.
     */
    @Test
    @TckRule(id = "fault.1", level = REQUIRED, hint = "close must be safe with requests in flight: fail them, release "
            + "resources, and let the peer see EOF so that its pending requests fail with NetException.remoteError.",
            beyondNccl = "README does not say what happens to requests in flight when either end closes; JCCL asks "
                    + "that they fail within a bounded time (CONTRIBUTING: every pending request completes, with an "
                    + "error if need be). NCCL's own transports leave such requests to the communicator's abort.")
    public void required_fault_1_closeWithRequestsInFlightIsSafe() throws Exception {
        fault().closeWithRequestsInFlight();
    }

    /**
     * A peer JVM holding both ends' partners is killed (SIGKILL) with requests pending both ways:
     * every pending request, and every later one, fails within the peer-death bound.
     */
    @Test
    @TckRule(id = "fault.2", level = REQUIRED, hint = "when a read or write sees EOF, ECONNRESET or EPIPE (or a "
            + "completion fails), fail every pending request of the comm with NetException.remoteError and keep "
            + "failing later calls; never keep returning false from test or null from isend/irecv.",
            beyondNccl = "README does not say what happens to pending requests when the peer process dies; JCCL "
                    + "asks that they fail within a bounded time (CONTRIBUTING). NCCL's own IB transport leaves "
                    + "them to the communicator's abort.")
    public void required_fault_2_aKilledPeerFailsEveryPendingRequest() throws Exception {
        fault().peerKilled(peerTransport());
    }

    /**
     * Raw TCP connections that stay silent, send garbage or leave at once do not make accept return
     * a comm, block, or fail, and a genuine connection still gets through.
     */
    @Test
    @TckRule(id = "fault.3", level = REQUIRED, hint = "accept must read handshakes without blocking and drop "
            + "connections that send nothing, garbage or close early (authenticate with a secret carried in the "
            + "handle); a stray must not delay genuine peers (NVIDIA/nccl #1808).",
            beyondNccl = "README asks only that accept not block; JCCL asks that stray or hostile connections on "
                    + "the listening socket not delay genuine peers (NVIDIA/nccl #1808 shows NCCL's transports do "
                    + "not yet guarantee it).")
    public void required_fault_3_strayConnectionsDoNotWedgeTheListener() throws Exception {
        fault().strayConnectionsDoNotWedgeTheListener();
    }

    /** {@code deregMr} of an unknown, already released or foreign handle fails with a NetException. */
    @Test
    @TckRule(id = "fault.4", level = REQUIRED, hint = "deregMr must look the handle up among the comm's registrations and "
            + "throw NetException.invalidArgument for anything else, instead of casting or freeing it.",
            beyondNccl = "NCCL passes deregMr only handles that regMr returned; JCCL asks that anything else be "
                    + "refused rather than freed.")
    public void required_fault_4_deregOfAnUnknownHandleIsAnError() throws Exception {
        fault().deregOfUnknownHandleIsAnError();
    }

    /** {@code irecv} with more buffers than maxRecvs fails with ncclInternalError. */
    @Test
    @TckRule(id = "fault.5", level = OPTIONAL, hint = "irecv must check n against maxRecvs and throw "
            + "NetException.internalError.")
    public void optional_fault_5_tooManyGroupedBuffersAreRefused() throws Exception {
        fault().tooManyGroupedBuffersRefused();
    }

    /** Receives pending when the sender closes fail with ncclRemoteError exactly. */
    @Test
    @TckRule(id = "fault.6", level = OPTIONAL, hint = "map EOF and ECONNRESET from the peer to "
            + "NetException.remoteError, not internalError or systemError (NVIDIA/nccl #795).",
            beyondNccl = "README's list of error codes has no case for a closed peer; JCCL asks for "
                    + "ncclRemoteError, as NCCL's own transports return for it (NVIDIA/nccl #795).")
    public void optional_fault_6_aClosedPeerIsReportedAsRemoteError() throws Exception {
        fault().closedPeerIsRemoteError();
    }
}
