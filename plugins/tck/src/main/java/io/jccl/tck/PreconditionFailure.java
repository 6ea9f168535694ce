package io.jccl.tck;

/**
 * The transport under test did not get through the set-up that NCCL performs before it opens any
 * connection (spec 4.3), so the kit ran none of its rules: one verdict instead of every rule
 * failing for the same reason. Thrown from the kit's set-up; {@code jccl tck} reports it on one
 * line, and under a build tool the kit class fails once with this message.
 */
public final class PreconditionFailure extends AssertionError {
    private static final long serialVersionUID = 1L;

    /** The numbered preconditions, checked in this order before the first rule. */
    public enum Precondition {
        /** {@code init} succeeds. */
        INIT("pre.1", "init succeeds", "the transport's log (NCCL_DEBUG=INFO) says why init failed; NCCL falls back to "
                + "the next network when init fails, so the transport cannot be used here as configured."),
        /** {@code devices()} succeeds and reports at least one device. */
        DEVICES("pre.2", "devices() reports at least one device", "NCCL disables a network that reports no device "
                + "(spec 4.3); check that the hardware (NIC, verbs device, libfabric provider) is present and "
                + "selected by the transport's variables."),
        /** {@code getProperties} succeeds for every device. */
        PROPERTIES("pre.3", "getProperties succeeds for every device", "NCCL reads every device's properties "
                + "before it connects anything (topology detection) and gives up on the communicator if one fails.");

        private final String id;
        private final String title;
        private final String hint;

        Precondition(String id, String title, String hint) {
            this.id = id;
            this.title = title;
            this.hint = hint;
        }

        /** @return e.g. {@code pre.1} */
        public String id() {
            return id;
        }

        /** @return what it requires, e.g. {@code init succeeds} */
        public String title() {
            return title;
        }

        /** @return where to look when it fails */
        public String hint() {
            return hint;
        }
    }

    private final Precondition precondition;
    private final String detail;

    /**
     * @param precondition the precondition that failed
     * @param transport    the name of the transport under test
     * @param detail       what happened, e.g. the transport's exception
     * @param cause        the transport's exception, or {@code null}
     */
    public PreconditionFailure(Precondition precondition, String transport, String detail, Throwable cause) {
        super("[" + precondition.id() + "] " + transport + ": " + detail + "; no rule ran.\nIf this fails, check: "
                + precondition.hint(), cause);
        this.precondition = precondition;
        this.detail = transport + ": " + detail;
    }

    /** @return the precondition that failed */
    public Precondition precondition() {
        return precondition;
    }

    /** @return the one-line verdict: {@code [pre.1] init succeeds: NAME: what happened} */
    public String verdict() {
        return "[" + precondition.id() + "] " + precondition.title() + ": failed, " + detail;
    }
}
