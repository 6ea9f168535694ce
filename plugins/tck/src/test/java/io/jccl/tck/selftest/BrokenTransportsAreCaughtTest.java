package io.jccl.tck.selftest;

import io.jccl.tck.TckConfig;
import io.jccl.tck.run.RuleOutcome;
import io.jccl.tck.run.TckResult;
import io.jccl.tck.run.TckRunner;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Proof that the kit catches bugs: the whole kit runs against JcclSocket with one deliberate
 * defect at a time, and the rules that fail must be exactly the ones meant to catch it (plus, for
 * a few defects, rules that exercise the same behaviour). Runs with small messages (4 MiB), a
 * short stress run and shorter stall timeouts to stay quick; the full-size run is
 * {@code JcclSocketConformanceTest}.
 */
class BrokenTransportsAreCaughtTest {

    @ParameterizedTest
    @EnumSource(Defect.class)
    void theRightRulesFlagTheDefect(Defect defect) throws Exception {
        StringBuilder rows = new StringBuilder();
        BrokenTransports.HangOnPeerDeath.SWALLOWED.clear();
        TckResult result = TckRunner.of(BrokenSocketTck.class)
                .parameter(BrokenSocketTck.DEFECT, defect.name())
                .parameter(TckConfig.JCCL_TCK_MAX_SIZE, "4M")
                .parameter(TckConfig.JCCL_TCK_STRESS_MESSAGES, "300")
                // A stuck request is what most defects produce: give up on it sooner than a real run would.
                .parameter(TckConfig.JCCL_TCK_COMPLETION_TIMEOUT_MS, "4000")
                .parameter(TckConfig.JCCL_TCK_PEER_DEATH_TIMEOUT_MS, "7000")
                .onRule(o -> rows.append(o.row()).append('\n'))
                .run();
        Set<String> flagged = result.outcomes().stream().filter(o -> o.status() == RuleOutcome.Status.FAIL)
                .map(o -> o.rule().id()).collect(Collectors.toCollection(TreeSet::new));
        Set<String> missed = new TreeSet<>(defect.mustFlag());
        missed.removeAll(flagged);
        Set<String> unrelated = new TreeSet<>(flagged);
        unrelated.removeAll(defect.mustFlag());
        unrelated.removeAll(defect.mayFlag());
        String context = defect + ": flagged " + flagged + "\n" + rows
                + (BrokenTransports.HangOnPeerDeath.SWALLOWED.isEmpty() ? ""
                        : "errors the defect swallowed (first " + BrokenTransports.HangOnPeerDeath.SWALLOWED.size()
                        + "): " + BrokenTransports.HangOnPeerDeath.SWALLOWED + "\n");
        assertTrue(result.problems().isEmpty(), "the kit itself failed: " + result.problems() + "\n" + context);
        assertTrue(missed.isEmpty(), "rules that should have caught " + defect + " passed: " + missed + "\n" + context);
        assertTrue(unrelated.isEmpty(), "rules unrelated to " + defect + " failed: " + unrelated + "\n" + context);
        System.out.println(defect + " flagged by " + flagged + " in " + result.wallTime().toMillis() + " ms");
    }
}
