package io.jccl.tck.run;

import io.jccl.tck.RuleLevel;

import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/** Renders a run as {@code report.md}: a summary, one table row per rule, then failures with their hints and skips with their reasons. */
final class MarkdownReport {
    private MarkdownReport() {
    }

    static String render(String title, TckResult r) {
        StringBuilder sb = new StringBuilder();
        sb.append("# JCCL conformance report: ").append(title).append("\n\n");
        if (r.checkedNothing()) {
            sb.append("- Result: **NOT checked**: no rule ran, because the kit could not set up the transport\n");
        } else {
            sb.append("- Result: **").append(r.conformant() ? "conformant" : "NOT conformant")
                    .append("** (every required rule that ran ").append(r.conformant() ? "passed" : "must pass").append(")\n");
            if (!r.conformant()) {
                sb.append("- Deviations from NCCL's documented contract: ").append(ids(r.failed(true)))
                        .append("; failed JCCL rules beyond it: ").append(ids(r.failed(false))).append('\n');
            }
        }
        sb.append("- Rules: ").append(r.summary()).append('\n');
        sb.append("- Time: ").append(RuleOutcome.seconds(r.wallTime())).append(" in all; required rules ")
                .append(RuleOutcome.seconds(r.time(RuleLevel.REQUIRED))).append('\n');
        sb.append("- Run: ").append(ZonedDateTime.now().truncatedTo(ChronoUnit.SECONDS).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME))
                .append(", JVM ").append(Runtime.version()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs, ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.arch"))
                .append("\n\n");
        for (String p : r.problems()) {
            sb.append("> **Problem:** ").append(cell(p)).append("\n\n");
        }
        sb.append("| rule | level | result | time | what it checks |\n|---|---|---|---:|---|\n");
        for (RuleOutcome o : r.outcomes()) {
            sb.append("| ").append(o.rule().id()).append(" | ").append(o.rule().level().label()).append(" | ")
                    .append(o.status() == RuleOutcome.Status.FAIL ? "**FAIL**" : o.status().name()).append(" | ")
                    .append(RuleOutcome.seconds(o.time())).append(" | ").append(cell(o.rule().title())).append(" |\n");
        }
        boolean header = false;
        for (RuleOutcome o : r.outcomes()) {
            if (o.status() != RuleOutcome.Status.FAIL) {
                continue;
            }
            if (!header) {
                sb.append("\n## Failures\n");
                header = true;
            }
            sb.append("\n### ").append(o.rule().id()).append(" (").append(o.rule().level().label()).append("): ")
                    .append(o.rule().title()).append("\n\n```\n").append(o.detail().strip()).append("\n```\n\n")
                    .append("**If this fails, check:** ").append(o.rule().hint()).append('\n');
            if (!o.rule().ncclDocumented()) {
                sb.append("\n**Not a deviation from NCCL's documented contract:** ").append(o.rule().beyondNccl())
                        .append('\n');
            }
        }
        header = false;
        for (RuleOutcome o : r.outcomes()) {
            if (o.status() != RuleOutcome.Status.SKIP) {
                continue;
            }
            if (!header) {
                sb.append("\n## Skipped\n\n");
                header = true;
            }
            sb.append("- ").append(o.rule().id()).append(" ").append(o.rule().title()).append(": ")
                    .append(cell(o.headline())).append('\n');
        }
        return sb.toString();
    }

    private static String ids(java.util.List<String> ids) {
        return ids.isEmpty() ? "none" : String.join(", ", ids);
    }

    private static String cell(String s) {
        return s.replace("|", "\\|").replace('\n', ' ');
    }
}
