package io.jccl.tck.selftest;

import io.jccl.spi.ForwardingNetPlugin;
import io.jccl.spi.NetPlugin;

import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The bugs the kit must catch, each with the rules that must flag it and the rules that may also
 * flag it because they exercise the same behaviour; any other failing rule would be a false alarm.
 */
enum Defect {
    /** No bug: the forwarding layer alone. Nothing may fail. */
    NONE(d -> new ForwardingNetPlugin(d), Set.of(), Set.of()),
    BLOCKING_CONNECT(BrokenTransports.BlockingConnect::new, Set.of("conn.2"), Set.of()),
    /** The random stress run (xfer.12) meets it too whenever it happens to keep more than 8 in flight. */
    LOST_COMPLETION(BrokenTransports.LostCompletion::new, Set.of("xfer.5"), Set.of("xfer.12")),
    /** Order breaks only when receives complete together, so every pipelined rule may see it. */
    REORDERING(BrokenTransports.Reordering::new, Set.of("xfer.1"),
            Set.of("xfer.3", "xfer.5", "xfer.6", "xfer.11", "xfer.12")),
    SILENT_TRUNCATION(BrokenTransports.SilentTruncation::new, Set.of("xfer.4"), Set.of()),
    /** fault.6 (optional) reads the error code of the same swallowed failure. */
    HANG_ON_PEER_DEATH(BrokenTransports.HangOnPeerDeath::new, Set.of("fault.1", "fault.2"), Set.of("fault.6")),
    /**
     * Every rule that posts receives larger than their messages (as NCCL posts its fixed slots) and
     * checks sizes may see it; xfer.3, the rule about exactly that, must.
     */
    WRONG_SIZE_IN_TEST(BrokenTransports.WrongSizeInTest::new, Set.of("xfer.3"),
            Set.of("xfer.1", "xfer.6", "xfer.7", "xfer.12")),
    UNCHECKED_DEREG(BrokenTransports.UncheckedDereg::new, Set.of("fault.4"), Set.of()),
    ZERO_SPEED(BrokenTransports.ZeroSpeed::new, Set.of("life.4"), Set.of());

    private final UnaryOperator<NetPlugin> wrap;
    private final Set<String> mustFlag;
    private final Set<String> mayFlag;

    Defect(UnaryOperator<NetPlugin> wrap, Set<String> mustFlag, Set<String> mayFlag) {
        this.wrap = wrap;
        this.mustFlag = mustFlag;
        this.mayFlag = mayFlag;
    }

    NetPlugin wrap(NetPlugin correct) {
        return wrap.apply(correct);
    }

    Set<String> mustFlag() {
        return mustFlag;
    }

    Set<String> mayFlag() {
        return mayFlag;
    }
}
