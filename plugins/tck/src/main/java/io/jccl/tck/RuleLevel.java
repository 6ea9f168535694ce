package io.jccl.tck;

/** How binding a conformance rule is. */
public enum RuleLevel {
    /**
     * The contract of {@code io.jccl.spi} (and of NCCL's plugin README) demands it: a transport that
     * fails a required rule is not conformant. Method names start with {@code required_}.
     */
    REQUIRED,
    /**
     * Behaviour NCCL does not rely on today but that users of a transport run into (exact error codes,
     * refusing misuse cleanly). Failing one is reported, not fatal. Method names start with
     * {@code optional_}.
     */
    OPTIONAL;

    /** @return {@code required} or {@code optional}, as rule method names and reports write it */
    public String label() {
        return this == REQUIRED ? "required" : "optional";
    }
}
