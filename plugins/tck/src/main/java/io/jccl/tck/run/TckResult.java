package io.jccl.tck.run;

import io.jccl.tck.RuleLevel;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The outcome of a kit run.
 *
 * @param outcomes one per rule run (or not run because its kit class could not start), in run order
 * @param problems failures outside any rule: a kit class whose transport could not be set up (a failed
 *                 precondition, or createPlugin failing), whose rules then did not run
 * @param wallTime how long the run took
 * @param reports  the files written (JUnit XML, Markdown), empty without a report directory
 */
public record TckResult(List<RuleOutcome> outcomes, List<String> problems, Duration wallTime, List<Path> reports) {
    public TckResult {
        outcomes = List.copyOf(outcomes);
        problems = List.copyOf(problems);
        reports = List.copyOf(reports);
    }

    /** @return whether every required rule that ran passed and nothing failed outside the rules */
    public boolean conformant() {
        return problems.isEmpty() && outcomes.stream().noneMatch(RuleOutcome::failsConformance);
    }

    /**
     * @return whether the run checked nothing: no rule ran because the kit could not set up the
     *         transport (a failed precondition such as init or no device), which {@link #problems} says
     */
    public boolean checkedNothing() {
        return outcomes.isEmpty() && !problems.isEmpty();
    }

    /** @return the run's verdict in one line */
    public String verdict() {
        if (checkedNothing()) {
            return "NOT CHECKED: no rule ran; " + problems.get(0);
        }
        if (!problems.isEmpty()) {
            return "NOT CONFORMANT: " + problems.get(0);
        }
        if (conformant()) {
            return "CONFORMANT: every required rule that ran passed.";
        }
        List<String> deviations = failed(true);
        List<String> beyond = failed(false);
        return "NOT CONFORMANT: a required rule failed. Deviations from NCCL's documented contract: "
                + (deviations.isEmpty() ? "none" : String.join(", ", deviations))
                + (beyond.isEmpty() ? "" : "; failed JCCL rules beyond it: " + String.join(", ", beyond)) + ".";
    }

    /** @return the ids of the failed rules that NCCL's documentation requires ({@code true}) or goes beyond ({@code false}) */
    public List<String> failed(boolean ncclDocumented) {
        return outcomes.stream().filter(o -> o.status() == RuleOutcome.Status.FAIL
                && o.rule().ncclDocumented() == ncclDocumented).map(o -> o.rule().id()).toList();
    }

    /** @return how many rules of a level ended with a status */
    public long count(RuleLevel level, RuleOutcome.Status status) {
        return outcomes.stream().filter(o -> o.rule().level() == level && o.status() == status).count();
    }

    /** @return the time spent in the rules of a level */
    public Duration time(RuleLevel level) {
        return outcomes.stream().filter(o -> o.rule().level() == level).map(RuleOutcome::time)
                .reduce(Duration.ZERO, Duration::plus);
    }

    /** @return e.g. {@code required: 25 passed, 0 failed, 1 skipped; optional: 3 passed, 1 failed, 0 skipped} */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        for (RuleLevel l : RuleLevel.values()) {
            if (sb.length() > 0) {
                sb.append("; ");
            }
            sb.append(l.label()).append(": ").append(count(l, RuleOutcome.Status.PASS)).append(" passed, ")
                    .append(count(l, RuleOutcome.Status.FAIL)).append(" failed, ")
                    .append(count(l, RuleOutcome.Status.SKIP)).append(" skipped");
        }
        return sb.toString();
    }
}
