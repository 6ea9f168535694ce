package io.jccl.core;

/** The two ways ranks of one host can connect; suites that move data run over both. */
enum DataPath {
    /** Through the network transport (JcclSocket here), as ranks on different hosts do. */
    NETWORK(false),
    /** Through shared memory, the default between ranks of one host. */
    SHARED_MEMORY(true);

    final boolean shm;

    DataPath(boolean shm) {
        this.shm = shm;
    }

    /** @return a config builder for this path */
    CommConfig.Builder config() {
        return CommConfig.builder().sharedMemory(shm);
    }
}
