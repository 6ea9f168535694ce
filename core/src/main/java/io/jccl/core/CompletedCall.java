package io.jccl.core;

import java.time.Duration;

/** The completion of a call that ended before it returned (a small collective on the calling thread). */
final class CompletedCall implements Completion {
    static final CompletedCall INSTANCE = new CompletedCall();

    private CompletedCall() {
    }

    @Override
    public boolean isDone() {
        return true;
    }

    @Override
    public void await() {
    }

    @Override
    public boolean await(Duration timeout) {
        return true;
    }

    @Override
    public JcclException error() {
        return null;
    }

    @Override
    public String toString() {
        return "completed call";
    }
}
