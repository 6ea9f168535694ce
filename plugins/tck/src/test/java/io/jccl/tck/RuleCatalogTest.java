package io.jccl.tck;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The rules are data the CLI and reports print: every rule method declares itself consistently. */
class RuleCatalogTest {

    private static List<ConformanceRule> allRules() {
        List<ConformanceRule> rules = new ArrayList<>(ConformanceRule.all(NetPluginTck.class));
        rules.addAll(ConformanceRule.all(CollNetPluginTck.class));
        return rules;
    }

    @Test
    void everyTestMethodOfTheKitIsARule() {
        for (Class<?> kit : List.of(NetPluginTck.class, CollNetPluginTck.class)) {
            for (Method m : kit.getDeclaredMethods()) {
                if (m.isAnnotationPresent(org.junit.jupiter.api.Test.class) && m.getAnnotation(TckRule.class) == null) {
                    fail(kit.getSimpleName() + "." + m.getName() + " is a test without @TckRule");
                }
            }
        }
    }

    @Test
    void idsAreUniqueAndNamesAgreeWithAnnotations() {
        Set<String> ids = new HashSet<>();
        for (ConformanceRule r : allRules()) {
            assertTrue(ids.add(r.id()), "rule id used twice: " + r.id());
            assertTrue(r.id().matches("(life|conn|xfer|fault|coll)\\.[1-9][0-9]*"), "malformed id " + r.id());
            assertTrue(r.method().getName().startsWith(r.methodPrefix()), r.method().getName()
                    + " must start with " + r.methodPrefix() + " (its id and level)");
            assertTrue(r.hint().length() > 30 && r.hint().endsWith("."), r.id() + ": the hint must say where to look, "
                    + "in a sentence: " + r.hint());
            assertTrue(r.ncclDocumented() || (r.beyondNccl().length() > 30 && r.beyondNccl().endsWith(".")),
                    r.id() + ": what a rule asks beyond NCCL's documentation is said in a sentence: " + r.beyondNccl());
        }
    }

    @Test
    void rulesAreNumberedWithoutGapsPerArea() {
        java.util.Map<String, List<Integer>> byArea = new java.util.TreeMap<>();
        for (ConformanceRule r : allRules()) {
            byArea.computeIfAbsent(r.area(), a -> new ArrayList<>()).add(r.number());
        }
        byArea.forEach((area, numbers) -> {
            numbers.sort(null);
            for (int i = 0; i < numbers.size(); i++) {
                assertEquals(i + 1, numbers.get(i), area + " rules must be numbered 1.." + numbers.size() + ": " + numbers);
            }
        });
    }

    @Test
    void rulesRunByAreaThenNumber() {
        List<String> order = ConformanceRule.all(NetPluginTck.class).stream().map(ConformanceRule::id).toList();
        assertEquals("life.1", order.get(0));
        assertTrue(order.indexOf("conn.9") < order.indexOf("xfer.1"), order.toString());
        assertTrue(order.indexOf("xfer.2") < order.indexOf("xfer.10"), "numeric, not lexical, order: " + order);
        assertTrue(order.indexOf("xfer.12") < order.indexOf("fault.1"), "faults run last: " + order);
    }

    /** A vendor's kit class that overrides a rule, as the Reactive Streams TCK allows, to skip it with a reason. */
    static class KitThatSkipsARule extends NetPluginTck {
        @Override
        protected io.jccl.spi.NetPlugin createPlugin() {
            throw new UnsupportedOperationException("never run");
        }

        @Override
        public void required_conn_9_aGarbageHandleIsRefused() {
            org.junit.jupiter.api.Assumptions.abort("this transport has no handle validation yet");
        }
    }

    @Test
    void anOverriddenRuleKeepsItsIdOnce() throws Exception {
        Method m = KitThatSkipsARule.class.getMethod("required_conn_9_aGarbageHandleIsRefused");
        assertEquals("conn.9", ConformanceRule.of(m).orElseThrow().id());
        List<ConformanceRule> rules = ConformanceRule.all(KitThatSkipsARule.class);
        assertEquals(1, rules.stream().filter(r -> r.id().equals("conn.9")).count());
        assertEquals(ConformanceRule.all(NetPluginTck.class).size(), rules.size());
    }

    @Test
    void titlesComeFromMethodNames() {
        assertEquals("one listen comm serves many connections",
                ConformanceRule.titleOf("required_conn_3_oneListenCommServesManyConnections"));
        assertEquals("a killed peer fails every pending request",
                ConformanceRule.titleOf("required_fault_2_aKilledPeerFailsEveryPendingRequest"));
        assertEquals("max requests in flight", ConformanceRule.titleOf("required_xfer_5_maxRequestsInFlight"));
    }
}
