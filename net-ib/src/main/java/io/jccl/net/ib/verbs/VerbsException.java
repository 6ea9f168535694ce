package io.jccl.net.ib.verbs;

/**
 * A verbs call failed. Carries the C function's name and the {@code errno} it reported, so the
 * transport can turn it into a {@code NetException} with a message that says what to check.
 */
public final class VerbsException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int errno;

    /**
     * @param function the C function, e.g. {@code ibv_reg_mr}
     * @param errno    the error number it reported (0 if it gave none)
     * @param detail   what was being done, e.g. {@code "64 MiB at 0x7f..."}; may be empty
     */
    public VerbsException(String function, int errno, String detail) {
        super(function + " failed" + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")") + ": "
                + Verbs.errnoDescription(errno));
        this.function = function;
        this.errno = errno;
    }

    /** @return the C function that failed */
    public String function() {
        return function;
    }

    /** @return the {@code errno} value, 0 if none was reported */
    public int errno() {
        return errno;
    }
}
