package io.jccl.tck.collnet;

import io.jccl.tck.TckConfig;
import io.jccl.tck.run.RuleOutcome;
import io.jccl.tck.run.TckResult;
import io.jccl.tck.run.TckRunner;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CollNet rules pass on a correct CollNet transport (the kit's in-process test double) and
 * flag each deliberately broken one by exactly the rule meant for it.
 */
class CollNetRulesCatchDefectsTest {

    @ParameterizedTest
    @EnumSource(CollDefect.class)
    void theRightRuleFlagsTheDefect(CollDefect defect) throws Exception {
        StringBuilder rows = new StringBuilder();
        TckResult result = TckRunner.of(LoopbackCollNetTck.class)
                .parameter(LoopbackCollNetTck.DEFECT, defect.name())
                .parameter(TckConfig.JCCL_TCK_COMPLETION_TIMEOUT_MS, "4000")
                .parameter(TckConfig.JCCL_TCK_PEER_DEATH_TIMEOUT_MS, "4000")
                .onRule(o -> rows.append(o.row()).append('\n'))
                .run();
        Set<String> flagged = result.outcomes().stream().filter(o -> o.status() == RuleOutcome.Status.FAIL)
                .map(o -> o.rule().id()).collect(Collectors.toCollection(TreeSet::new));
        assertTrue(result.problems().isEmpty(), "the kit itself failed: " + result.problems() + "\n" + rows);
        assertEquals(new TreeSet<>(defect.mustFlag()), flagged, defect + "\n" + rows);
        if (defect == CollDefect.NONE) {
            assertTrue(result.outcomes().stream().allMatch(o -> o.status() == RuleOutcome.Status.PASS),
                    "every CollNet rule runs and passes on a correct transport\n" + rows);
        }
        System.out.println(defect + " flagged by " + flagged + " in " + result.wallTime().toMillis() + " ms");
    }
}
