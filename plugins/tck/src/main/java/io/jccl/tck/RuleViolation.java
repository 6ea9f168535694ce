package io.jccl.tck;

/**
 * A failed rule, as the kit reports it: the rule's id, what went wrong and where to look. Wraps the
 * original failure (an assertion, or an exception the transport threw) as its cause.
 */
public final class RuleViolation extends AssertionError {
    private static final long serialVersionUID = 1L;

    private final String ruleId;
    private final String detail;
    private final String hint;

    /**
     * @param rule       the failed rule
     * @param detail     what went wrong
     * @param transportLog what the transport logged during the rule (may be empty)
     * @param cause      the original failure
     */
    public RuleViolation(ConformanceRule rule, String detail, String transportLog, Throwable cause) {
        super("[" + rule.id() + " " + rule.level().label() + "] " + detail + "\nIf this fails, check: " + rule.hint()
                + (transportLog.isEmpty() ? "" : "\nThe transport logged meanwhile:\n" + transportLog), cause);
        this.ruleId = rule.id();
        this.detail = detail;
        this.hint = rule.hint();
    }

    /** @return the id of the failed rule */
    public String ruleId() {
        return ruleId;
    }

    /** @return what went wrong, without the hint */
    public String detail() {
        return detail;
    }

    /** @return where to look */
    public String hint() {
        return hint;
    }
}
