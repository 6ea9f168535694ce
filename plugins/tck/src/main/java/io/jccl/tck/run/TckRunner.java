package io.jccl.tck.run;

import io.jccl.tck.ConformanceRule;
import io.jccl.tck.PreconditionFailure;
import io.jccl.tck.RuleLevel;
import io.jccl.tck.RuleViolation;
import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.PostDiscoveryFilter;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.reporting.legacy.xml.LegacyXmlReportGeneratingListener;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * Runs kit classes through the JUnit Platform launcher, outside any build tool: behind
 * {@code jccl tck}, and usable from any program.
 *
 * <pre>{@code
 * TckResult r = TckRunner.of(DiscoveredNetPluginTck.class)
 *         .parameter(TckRunner.NET_PARAMETER, "JcclSocket")
 *         .requiredOnly(true)
 *         .onRule(o -> System.out.println(o.row()))
 *         .reportDirectory(Path.of("target/jccl-tck"))
 *         .run();
 * }</pre>
 *
 * <p>Writes JUnit's XML report (the format CI servers read) and {@code report.md} into the report
 * directory.
 */
public final class TckRunner {
    /** The configuration parameter that names the ncclNet transport for {@link DiscoveredNetPluginTck}. */
    public static final String NET_PARAMETER = "jccl.tck.net";
    /** The configuration parameter that names the ncclCollNet transport for {@link DiscoveredCollNetPluginTck}. */
    public static final String COLLNET_PARAMETER = "jccl.tck.collnet";

    private final List<Class<?>> kits;
    private final Map<String, String> parameters = new LinkedHashMap<>();
    private final List<String> onlyRules = new ArrayList<>();
    private boolean requiredOnly;
    private Path reportDirectory;
    private Consumer<RuleOutcome> onRule = o -> { };
    private String title = "transport under test";

    private TckRunner(List<Class<?>> kits) {
        this.kits = List.copyOf(kits);
    }

    /** @return a runner of these kit classes (subclasses of NetPluginTck or CollNetPluginTck) */
    public static TckRunner of(Class<?>... kitClasses) {
        if (kitClasses.length == 0) {
            throw new IllegalArgumentException("no kit class to run");
        }
        return new TckRunner(List.of(kitClasses));
    }

    /** Sets a JUnit configuration parameter, e.g. {@link #NET_PARAMETER} or a {@code JCCL_TCK_*} setting. */
    public TckRunner parameter(String key, String value) {
        parameters.put(Objects.requireNonNull(key), Objects.requireNonNull(value));
        return this;
    }

    /** Runs only the required rules. */
    public TckRunner requiredOnly(boolean only) {
        this.requiredOnly = only;
        return this;
    }

    /** Runs only rules whose id is one of these or starts with one of them and a dot ({@code conn}, {@code xfer.2}). */
    public TckRunner onlyRules(Collection<String> idsOrAreas) {
        onlyRules.addAll(idsOrAreas);
        return this;
    }

    /** Writes JUnit XML and {@code report.md} here (created if needed). */
    public TckRunner reportDirectory(Path dir) {
        this.reportDirectory = dir;
        return this;
    }

    /** Called as each rule finishes, on the launcher's thread. */
    public TckRunner onRule(Consumer<RuleOutcome> listener) {
        this.onRule = Objects.requireNonNull(listener);
        return this;
    }

    /** Names the transport in the report's title. */
    public TckRunner title(String transport) {
        this.title = Objects.requireNonNull(transport);
        return this;
    }

    /** @return whether a rule passes the level and id filters */
    boolean selected(ConformanceRule rule) {
        if (requiredOnly && rule.level() != RuleLevel.REQUIRED) {
            return false;
        }
        if (onlyRules.isEmpty()) {
            return true;
        }
        return onlyRules.stream().anyMatch(p -> rule.id().equals(p) || rule.id().startsWith(p + "."));
    }

    private static Optional<ConformanceRule> ruleOf(TestSource source) {
        if (source instanceof MethodSource m) {
            try {
                return ConformanceRule.of(m.getJavaMethod());
            } catch (RuntimeException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** Runs the kit classes. @throws IOException if the reports cannot be written */
    public TckResult run() throws IOException {
        LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request()
                .configurationParameters(parameters)
                .configurationParameter("junit.jupiter.execution.parallel.enabled", "false")
                .filters((PostDiscoveryFilter) this::filter);
        for (Class<?> k : kits) {
            request.selectors(selectClass(k));
        }
        LauncherDiscoveryRequest discovery = request.build();
        Launcher launcher = LauncherFactory.create();
        Collector collector = new Collector();
        List<TestExecutionListener> listeners = new ArrayList<>(List.of(collector));
        List<Path> reports = new ArrayList<>();
        if (reportDirectory != null) {
            Files.createDirectories(reportDirectory);
            listeners.add(new LegacyXmlReportGeneratingListener(reportDirectory, new PrintWriter(new StringWriter())));
        }
        long start = System.nanoTime();
        launcher.execute(discovery, listeners.toArray(new TestExecutionListener[0]));
        TckResult result = new TckResult(collector.outcomes, collector.problems, Duration.ofNanos(System.nanoTime() - start),
                List.of());
        if (reportDirectory != null) {
            try (var files = Files.list(reportDirectory)) {
                files.filter(p -> p.getFileName().toString().endsWith(".xml")).forEach(reports::add);
            }
            Path md = reportDirectory.resolve("report.md");
            Files.writeString(md, MarkdownReport.render(title, result));
            reports.add(md);
            result = new TckResult(result.outcomes(), result.problems(), result.wallTime(), reports);
        }
        return result;
    }

    private FilterResult filter(TestDescriptor d) {
        if (!d.isTest()) {
            return FilterResult.included("container");
        }
        Optional<ConformanceRule> rule = d.getSource().flatMap(TckRunner::ruleOf);
        if (rule.isEmpty()) {
            return requiredOnly || !onlyRules.isEmpty() ? FilterResult.excluded("not a conformance rule")
                    : FilterResult.included("not a conformance rule");
        }
        return selected(rule.get()) ? FilterResult.included("selected") : FilterResult.excluded("filtered out");
    }

    /** Turns JUnit's events into rule outcomes. */
    private final class Collector implements TestExecutionListener {
        final List<RuleOutcome> outcomes = new ArrayList<>();
        final List<String> problems = new ArrayList<>();
        final Map<String, Long> started = new HashMap<>();
        final Map<String, Boolean> reported = new HashMap<>();
        TestPlan plan;

        @Override
        public void testPlanExecutionStarted(TestPlan testPlan) {
            this.plan = testPlan;
        }

        @Override
        public void executionStarted(TestIdentifier id) {
            started.put(id.getUniqueId(), System.nanoTime());
        }

        @Override
        public void executionSkipped(TestIdentifier id, String reason) {
            if (id.isTest()) {
                record(id, RuleOutcome.Status.SKIP, Duration.ZERO, reason);
            } else {
                for (TestIdentifier t : plan.getDescendants(id)) {
                    if (t.isTest()) {
                        record(t, RuleOutcome.Status.SKIP, Duration.ZERO, reason);
                    }
                }
            }
        }

        @Override
        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
            Long t0 = started.get(id.getUniqueId());
            Duration took = t0 == null ? Duration.ZERO : Duration.ofNanos(System.nanoTime() - t0);
            if (id.isTest()) {
                RuleOutcome.Status status = switch (result.getStatus()) {
                    case SUCCESSFUL -> RuleOutcome.Status.PASS;
                    case ABORTED -> RuleOutcome.Status.SKIP;
                    case FAILED -> RuleOutcome.Status.FAIL;
                };
                record(id, status, took, result.getThrowable().map(TckRunner::detailOf).orElse(""));
                return;
            }
            if (result.getStatus() == TestExecutionResult.Status.SUCCESSFUL) {
                return;
            }
            // A kit class that could not set up its transport: its rules did not run. Skipped on purpose
            // (an assumption: no hardware, no CollNet given), each rule says so; otherwise one verdict
            // for the whole class, not one failure per rule for the same reason.
            if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
                String why = result.getThrowable().map(TckRunner::detailOf).orElse("no reason given");
                for (TestIdentifier t : plan.getDescendants(id)) {
                    if (t.isTest() && !reported.containsKey(t.getUniqueId())) {
                        record(t, RuleOutcome.Status.SKIP, Duration.ZERO, why);
                    }
                }
                return;
            }
            long notRun = plan.getDescendants(id).stream()
                    .filter(t -> t.isTest() && !reported.containsKey(t.getUniqueId())).count();
            Optional<PreconditionFailure> precondition = result.getThrowable().flatMap(TckRunner::preconditionOf);
            String verdict = precondition.map(PreconditionFailure::verdict)
                    .orElseGet(() -> "the kit could not set up the transport: "
                            + firstLine(result.getThrowable().map(TckRunner::detailOf).orElse("no reason given")));
            problems.add(verdict + " (" + id.getDisplayName() + ": " + notRun + " rule" + (notRun == 1 ? "" : "s")
                    + " not run)");
        }

        private void record(TestIdentifier id, RuleOutcome.Status status, Duration took, String detail) {
            if (reported.put(id.getUniqueId(), true) != null) {
                return;
            }
            Optional<ConformanceRule> rule = id.getSource().flatMap(TckRunner::ruleOf);
            if (rule.isEmpty()) {
                if (status == RuleOutcome.Status.FAIL) {
                    problems.add(id.getDisplayName() + ": " + detail);
                }
                return;
            }
            String kit = id.getSource().filter(s -> s instanceof MethodSource)
                    .map(s -> ((MethodSource) s).getClassName()).orElse("");
            RuleOutcome o = new RuleOutcome(rule.get(), kit, status, took, detail);
            outcomes.add(o);
            onRule.accept(o);
        }
    }

    private static Optional<PreconditionFailure> preconditionOf(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof PreconditionFailure p) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }

    private static String firstLine(String s) {
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** A rule's failure without the hint the kit appends (the report prints the hint on its own). */
    static String detailOf(Throwable t) {
        if (t instanceof RuleViolation v) {
            return v.detail();
        }
        String m = t.getMessage();
        return m == null ? t.toString() : m;
    }
}
