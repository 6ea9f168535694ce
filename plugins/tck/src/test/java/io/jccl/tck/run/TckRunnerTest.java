package io.jccl.tck.run;

import io.jccl.tck.RuleLevel;
import io.jccl.tck.selftest.KitTestSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The runner behind {@code jccl tck}: filters, one outcome per rule, JUnit XML and the Markdown report. */
class TckRunnerTest {
    static {
        KitTestSettings.apply();
    }

    @Test
    void runsTheSelectedRulesOfANamedTransportAndWritesReports(@TempDir Path dir) throws Exception {
        List<RuleOutcome> live = new ArrayList<>();
        TckResult r = TckRunner.of(DiscoveredNetPluginTck.class, DiscoveredCollNetPluginTck.class)
                .parameter(TckRunner.NET_PARAMETER, "JcclSocket")
                .onlyRules(List.of("life", "conn.1", "coll"))
                .requiredOnly(true)
                .reportDirectory(dir)
                .title("JcclSocket")
                .onRule(live::add)
                .run();
        assertTrue(r.problems().isEmpty(), r.problems().toString());
        assertEquals(live, r.outcomes());
        List<String> ids = r.outcomes().stream().map(o -> o.rule().id()).toList();
        assertTrue(ids.containsAll(List.of("life.1", "life.7", "conn.1", "coll.1")), ids.toString());
        assertFalse(ids.contains("life.6"), "optional rules are filtered out: " + ids);
        assertFalse(ids.contains("conn.2"), "only conn.1 of its area: " + ids);
        for (RuleOutcome o : r.outcomes()) {
            if (o.rule().area().equals("coll")) {
                assertEquals(RuleOutcome.Status.SKIP, o.status(), o.row());
                assertTrue(o.detail().contains("no CollNet transport given"), o.row());
            } else {
                assertEquals(RuleOutcome.Status.PASS, o.status(), o.row());
            }
        }
        assertTrue(r.conformant());
        assertEquals(0, r.count(RuleLevel.REQUIRED, RuleOutcome.Status.FAIL));
        Path md = dir.resolve("report.md");
        assertTrue(r.reports().contains(md), r.reports().toString());
        String report = Files.readString(md);
        assertTrue(report.contains("# JCCL conformance report: JcclSocket"), report);
        assertTrue(report.contains("| life.1 | required | PASS |"), report);
        assertTrue(report.contains("**conformant**"), report);
        Path xml = r.reports().stream().filter(p -> p.toString().endsWith(".xml")).findFirst().orElseThrow();
        String junit = Files.readString(xml);
        assertTrue(junit.contains("<testsuite") && junit.contains("required_life_1_initMayBeCalledTwice"), junit);
    }

    @Test
    void aTransportThatCannotBeCreatedIsOneVerdictNotAFailurePerRule() throws Exception {
        List<RuleOutcome> rows = new ArrayList<>();
        TckResult r = TckRunner.of(DiscoveredNetPluginTck.class)
                .parameter(TckRunner.NET_PARAMETER, "NoSuchTransport")
                .onlyRules(List.of("life.1", "life.2"))
                .onRule(rows::add)
                .run();
        assertFalse(r.conformant());
        assertTrue(r.checkedNothing());
        assertEquals(List.of(), r.outcomes());
        assertEquals(List.of(), rows);
        assertEquals(1, r.problems().size(), r.problems().toString());
        assertTrue(r.problems().get(0).startsWith("the kit could not set up the transport: ")
                && r.problems().get(0).contains("no transport named NoSuchTransport")
                && r.problems().get(0).endsWith(": 2 rules not run)"), r.problems().get(0));
        assertTrue(r.verdict().startsWith("NOT CHECKED: no rule ran; the kit could not set up"), r.verdict());
    }

    @Test
    void aFailedRowCarriesWhyAndTheHint() throws Exception {
        RuleOutcome o = new RuleOutcome(io.jccl.tck.ConformanceRule.all(io.jccl.tck.NetPluginTck.class).get(0),
                "kit", RuleOutcome.Status.FAIL, java.time.Duration.ofMillis(1234), "devices() changed\nmore");
        String row = o.row();
        assertTrue(row.startsWith("life.1    required  FAIL    1.23 s  init may be called twice"), row);
        assertTrue(row.contains("why:  devices() changed\n"), row);
        assertTrue(row.contains("hint: init must be idempotent"), row);
    }

    @Test
    void theVerdictTellsDeviationsFromNcclsContractFromJcclRulesBeyondIt() {
        java.util.Map<String, io.jccl.tck.ConformanceRule> rules = new java.util.HashMap<>();
        io.jccl.tck.ConformanceRule.all(io.jccl.tck.NetPluginTck.class).forEach(r -> rules.put(r.id(), r));
        RuleOutcome sizes = new RuleOutcome(rules.get("xfer.4"), "kit", RuleOutcome.Status.FAIL,
                java.time.Duration.ZERO, "truncated");
        RuleOutcome close = new RuleOutcome(rules.get("fault.1"), "kit", RuleOutcome.Status.FAIL,
                java.time.Duration.ZERO, "no send failed");
        RuleOutcome order = new RuleOutcome(rules.get("xfer.1"), "kit", RuleOutcome.Status.PASS,
                java.time.Duration.ZERO, "");
        TckResult r = new TckResult(List.of(order, sizes, close), List.of(), java.time.Duration.ZERO, List.of());
        assertEquals(List.of("xfer.4"), r.failed(true));
        assertEquals(List.of("fault.1"), r.failed(false));
        assertEquals("NOT CONFORMANT: a required rule failed. Deviations from NCCL's documented contract: xfer.4; "
                + "failed JCCL rules beyond it: fault.1.", r.verdict());
        assertTrue(close.row().contains("\n          note: not a deviation from NCCL's documented contract: README does "
                + "not say"), close.row());
        assertFalse(sizes.row().contains("note:"), sizes.row());
    }
}
