package io.jccl.tck.selftest;

import io.jccl.tck.run.RuleOutcome;
import io.jccl.tck.run.TckResult;
import io.jccl.tck.run.TckRunner;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transport that fails init, reports no device, or cannot give its properties gets one verdict,
 * the failed precondition, and no rule runs: not one failed rule per rule for the same reason.
 */
class PreconditionsAreOneVerdictTest {

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "init       | [pre.1] init succeeds: failed, Unusable: init threw ncclSystemError: no interface to use",
            "devices    | [pre.2] devices() reports at least one device: failed, Unusable: 0 devices after init, and "
                    + "NCCL uses no transport without devices",
            "properties | [pre.3] getProperties succeeds for every device: failed, Unusable: getProperties(0) threw "
                    + "ncclInternalError: cannot read the link speed"})
    void aFailedPreconditionIsTheOnlyVerdict(String fault, String verdict) throws Exception {
        List<RuleOutcome> rows = new ArrayList<>();
        TckResult r = TckRunner.of(UnusableTransportTck.class)
                .parameter(UnusableTransportTck.FAULT, fault)
                .onRule(rows::add)
                .run();
        assertEquals(List.of(), rows, "no rule may run, let alone fail");
        assertEquals(List.of(), r.outcomes());
        assertEquals(1, r.problems().size(), r.problems().toString());
        String problem = r.problems().get(0);
        assertTrue(problem.startsWith(verdict + " (UnusableTransportTck: "), problem);
        assertTrue(problem.matches(".*: [0-9]+ rules not run\\)"), problem);
        assertTrue(r.checkedNothing());
        assertFalse(r.conformant());
        assertEquals("NOT CHECKED: no rule ran; " + problem, r.verdict());
    }
}
