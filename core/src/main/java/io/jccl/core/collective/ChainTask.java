package io.jccl.core.collective;

/**
 * Tasks that share connections (the collectives of one group on one channel) run one after the
 * other, in call order, as one task.
 */
final class ChainTask extends Task {
    private final Task[] chain;
    private int current;

    ChainTask(Task[] chain) {
        this.chain = chain;
    }

    @Override
    void start() {
        for (Task t : chain) {
            t.start();
        }
        skipDone();
    }

    @Override
    int progress() {
        int work = 0;
        while (current < chain.length) {
            int w = chain[current].progress();
            work += w;
            if (!chain[current].done) {
                break;
            }
            skipDone();
        }
        return work;
    }

    private void skipDone() {
        while (current < chain.length && chain[current].done) {
            current++;
        }
        done = current == chain.length;
    }

    @Override
    int blockingPeer() {
        return current < chain.length ? chain[current].blockingPeer() : -1;
    }

    @Override
    String waitingFor() {
        return current < chain.length ? chain[current].waitingFor() : "nothing";
    }
}
