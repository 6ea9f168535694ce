package io.jccl.tck.internal;

/** Thread diagnostics for failure messages. */
public final class Threads {
    private static final int MAX_FRAMES = 25;

    private Threads() {
    }

    /** @return the thread's stack, one frame a line, at most {@value #MAX_FRAMES} frames */
    public static String stackOf(Thread t) {
        StackTraceElement[] frames = t.getStackTrace();
        StringBuilder sb = new StringBuilder();
        sb.append("  \"").append(t.getName()).append("\" ").append(t.getState()).append('\n');
        for (int i = 0; i < Math.min(frames.length, MAX_FRAMES); i++) {
            sb.append("    at ").append(frames[i]).append('\n');
        }
        if (frames.length > MAX_FRAMES) {
            sb.append("    ... ").append(frames.length - MAX_FRAMES).append(" more\n");
        }
        return sb.toString();
    }
}
