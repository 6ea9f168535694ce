package io.jccl.core.collective;

/**
 * A part of an operation that progresses on its own: one channel of a collective, or the
 * transfers to or from one peer of a group. Proxy thread only.
 */
public abstract class Task {
    boolean done;

    /** The operation is now the proxy's: announce the receives this task will consume. */
    abstract void start();

    /**
     * Does what can be done now without blocking.
     *
     * @return how many steps moved
     * @throws io.jccl.core.JcclException if a peer sent what this rank did not expect
     */
    abstract int progress();

    /** @return what the task waits for, for a timeout message */
    abstract String waitingFor();

    /** @return the rank the task waits for, or -1 */
    abstract int blockingPeer();
}
