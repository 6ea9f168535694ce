package io.jccl.tck;

import io.jccl.spi.CollNetPlugin;
import io.jccl.spi.NetException;
import io.jccl.spi.config.Env;
import io.jccl.tck.internal.RecordingLogger;
import io.jccl.tck.internal.collnet.CollChecks;
import io.jccl.tck.internal.collnet.CollKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.function.Function;

import static io.jccl.tck.RuleLevel.REQUIRED;

/**
 * The conformance rules of an in-network reduction transport ({@link CollNetPlugin},
 * ncclCollNet): extend this class and return your transport from {@link #createPlugin()}.
 *
 * <p>Groups of 2, 3 and 4 ranks run in this JVM, one thread per rank, all on the one transport
 * instance (as the ranks of one process share a plugin under NCCL); {@code connect} is called by
 * every rank at once, as the blocking collective it is. Every rule skips when the transport
 * reports 0 devices (CollNet off), and every rule is skipped when {@link #createPlugin()} returns
 * {@code null} (no CollNet transport given: what {@code jccl tck} does without
 * {@code --collnet}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(RuleOrder.class)
@DisplayNameGeneration(RuleDisplayNames.class)
@ExtendWith(KitExtension.class)
public abstract class CollNetPluginTck {
    private Function<String, String> parameters = key -> null;
    private TckSettings settings;
    private RecordingLogger logger;
    private CollNetPlugin plugin;
    private CollKit kit;

    /**
     * @return a new, uninitialised instance of the transport under test, or {@code null} to skip
     *         every rule (no CollNet transport to test)
     */
    protected abstract CollNetPlugin createPlugin() throws Exception;

    /** @return the kit's timeouts and sizes; by default from the {@link TckConfig} variables */
    protected TckSettings settings() {
        return TckSettings.from(this::configurationParameter);
    }

    /** @return a JUnit configuration parameter, else the system property or environment variable, else null */
    protected final String configurationParameter(String key) {
        String v = parameters.apply(key);
        return v != null ? v : Env.get(key);
    }

    /** @return the transport under test, initialised */
    protected final CollNetPlugin plugin() {
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
        Assumptions.assumeTrue(plugin != null, "no CollNet transport given");
        try {
            plugin.init(logger);
        } catch (NetException e) {
            throw new PreconditionFailure(PreconditionFailure.Precondition.INIT, plugin.name(), "init threw "
                    + e.result().ncclName() + ": " + e.getMessage(), e);
        }
        kit = new CollKit(plugin, settings);
    }

    @AfterAll
    final void tearDownTransportUnderTest() throws Exception {
        if (plugin != null) {
            plugin.close();
        }
    }

    private CollChecks coll() {
        return new CollChecks(kit);
    }

    /** A second {@code init} keeps devices and properties; devices &gt;= 0 and every device's properties are sane. */
    @Test
    @TckRule(id = "coll.1", level = REQUIRED, hint = "init must be idempotent; devices() >= 0 (0 turns CollNet off "
            + "without failing); properties as for ncclNet (unique names, speed > 0, maxComms and maxRecvs >= 1, "
            + "HOST in ptrSupport).")
    public void required_coll_1_initTwiceAndSaneProperties() throws Exception {
        coll().initTwiceAndProperties(logger);
    }

    /** {@code reduceSupport} answers for every (type, op) NCCL asks about, the same way every time. */
    @Test
    @TckRule(id = "coll.2", level = REQUIRED, hint = "reduceSupport must answer true or false for every data type and "
            + "sum/prod/max/min, without throwing; NCCL asks on every head rank and needs the same answer everywhere.")
    public void required_coll_2_reduceSupportAnswersEveryPair() throws Exception {
        coll().reduceSupportAnswers();
    }

    /** Groups of 2, 3 and 4 ranks connect (every rank calls the collective connect at once) and close. */
    @Test
    @TckRule(id = "coll.3", level = REQUIRED, hint = "connect is a blocking collective: it returns on every rank once "
            + "all ranks of the handles array have joined; ranks of one process share the plugin instance.")
    public void required_coll_3_groupsOfTwoToFourRanksConnect() throws Exception {
        coll().groupsConnect();
    }

    /**
     * For 2 to 4 ranks and every pair reduceSupport accepts, iallreduce of 0, 1, 1001 and 262145
     * elements (and 1001 in place) gives every rank the exact result.
     */
    @Test
    @TckRule(id = "coll.4", level = REQUIRED, hint = "reduceSupport must tell the truth: every pair it accepts must "
            + "reduce correctly for counts 0, 1, odd and large, in place too (the tail of odd counts, chunk "
            + "boundaries, unsigned and 8/16-bit float arithmetic).")
    public void required_coll_4_iallreduceIsCorrectForEverySupportedPair() throws Exception {
        coll().allreduceIsCorrect();
    }

    /** Every pair reduceSupport refuses is refused by iallreduce with ncclInvalidArgument, at once. */
    @Test
    @TckRule(id = "coll.5", level = REQUIRED, hint = "iallreduce must check the pair against the same table "
            + "reduceSupport reads and throw NetException.invalidArgument, before starting anything.")
    public void required_coll_5_unsupportedPairsAreRefused() throws Exception {
        coll().unsupportedPairsRefused();
    }

    /** {@code deregMr} of an unknown or already released handle fails with a NetException. */
    @Test
    @TckRule(id = "coll.6", level = REQUIRED, hint = "deregMr must look the handle up among the comm's registrations "
            + "and throw NetException.invalidArgument for anything else.")
    public void required_coll_6_deregOfAnUnknownHandleIsAnError() throws Exception {
        coll().deregOfUnknownHandleIsAnError();
    }

    /** A rank closing with an iallreduce in flight returns, and the other rank's iallreduce then fails in bounded time. */
    @Test
    @TckRule(id = "coll.7", level = REQUIRED, hint = "closeColl must be safe with requests in flight, and the other "
            + "ranks must learn that the rank is gone (EOF, a failed completion) and fail their requests.")
    public void required_coll_7_closeWithRequestsInFlightFailsTheOtherRanks() throws Exception {
        coll().closeWithRequestsInFlight();
    }

    /** Every rank of a group ends with the same bits, for floating-point sums whose value depends on order. */
    @Test
    @TckRule(id = "coll.8", level = REQUIRED, hint = "reduce once, in one order, and send that result to every rank "
            + "(as a switch does); a transport where each rank reduces its own copy, or ranks add in different orders, "
            + "gives float sums that differ in their last bits between ranks.")
    public void required_coll_8_everyRankGetsTheSameBits() throws Exception {
        coll().everyRankGetsTheSameBits();
    }

    /** Eight iallreduce calls of different sizes in flight at once complete, in order, each with its own size and result. */
    @Test
    @TckRule(id = "coll.9", level = REQUIRED, hint = "NCCL's proxy keeps up to 8 requests in flight on a collComm and "
            + "tests them in issue order: each request must keep its own buffers, count and result; returning null "
            + "(retry) is allowed, never a request that reports another one's size or data.")
    public void required_coll_9_requestsInFlightCompleteWithTheirOwnResults() throws Exception {
        coll().requestsInFlightCompleteWithTheirOwnResults();
    }
}
