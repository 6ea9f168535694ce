package io.jccl.tck.run;

import io.jccl.tck.ConformanceRule;
import io.jccl.tck.RuleLevel;

import java.time.Duration;
import java.util.Locale;

/**
 * How one rule fared in a run.
 *
 * @param rule    the rule
 * @param kit     the kit class it ran in
 * @param status  pass, fail or skip
 * @param time    how long it ran
 * @param detail  for a failure what went wrong, for a skip why; empty for a pass
 */
public record RuleOutcome(ConformanceRule rule, String kit, Status status, Duration time, String detail) {

    /** A rule's result. */
    public enum Status { PASS, FAIL, SKIP }

    /** @return whether this is a failed required rule: what makes a transport non-conformant */
    public boolean failsConformance() {
        return status == Status.FAIL && rule.level() == RuleLevel.REQUIRED;
    }

    /** @return the first line of the detail */
    public String headline() {
        int nl = detail.indexOf('\n');
        return nl < 0 ? detail : detail.substring(0, nl);
    }

    /**
     * @return the console row: id, level, status, time and title; then, for a failure, what went
     *         wrong and the hint, for a skip the reason, each on its own indented line
     */
    public String row() {
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "%-9s %-9s %-5s %8s  %s", rule.id(),
                rule.level().label(), status, seconds(time), rule.title()));
        if (status == Status.FAIL) {
            sb.append("\n").append(String.format(Locale.ROOT, "%-9s why:  %s", "", headline()));
            sb.append("\n").append(String.format(Locale.ROOT, "%-9s hint: %s", "", rule.hint()));
            if (!rule.ncclDocumented()) {
                sb.append("\n").append(String.format(Locale.ROOT, "%-9s note: not a deviation from NCCL's documented "
                        + "contract: %s", "", rule.beyondNccl()));
            }
        } else if (status == Status.SKIP) {
            sb.append("\n").append(String.format(Locale.ROOT, "%-9s skip: %s", "", headline()));
        }
        return sb.toString();
    }

    static String seconds(Duration d) {
        return String.format(Locale.ROOT, "%.2f s", d.toNanos() / 1e9);
    }
}
