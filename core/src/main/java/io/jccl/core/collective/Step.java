package io.jccl.core.collective;

/**
 * One step of a ring algorithm (NCCL's primitives {@code send}, {@code recvReduceSend},
 * {@code recvReduceCopySend}, {@code recvCopySend}, {@code recv}, ...) as flags and offsets.
 * Reused: an algorithm fills it for each step.
 */
public final class Step {
    /** Takes a slot from the receive connection. */
    public static final int RECV = 1;
    /** Fills a slot of the send connection. */
    public static final int SEND = 2;
    /** Reads the local input at {@link #inOffset}: as the data when there is no RECV, as the second operand of REDUCE. */
    public static final int INPUT = 4;
    /** Writes the result to the output at {@link #outOffset}. */
    public static final int OUTPUT = 8;
    /** Combines the received data with the local input. */
    public static final int REDUCE = 16;
    /** Applies the operation's final step (the division of an average) to the result. */
    public static final int POSTOP = 32;

    /** What the step does. */
    public int flags;
    /** Element offset into the input. */
    public long inOffset;
    /** Element offset into the output. */
    public long outOffset;
    /** Elements the step moves; may be 0 (the message is still sent, so that every rank takes the same steps). */
    public long count;

    void set(int flags, long inOffset, long outOffset, long count) {
        this.flags = flags;
        this.inOffset = inOffset;
        this.outOffset = outOffset;
        this.count = count;
    }

    boolean has(int flag) {
        return (flags & flag) != 0;
    }
}
