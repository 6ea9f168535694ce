package io.jccl.core;

import io.jccl.core.collective.Operation;
import io.jccl.core.collective.OperationBuilder;

/** What one communicator collected in a group, and the handle its calls returned. */
final class PendingGroup {
    final Communicator comm;
    final OperationBuilder builder;
    final Operation operation;

    PendingGroup(Communicator comm, OperationBuilder builder) {
        this.comm = comm;
        this.builder = builder;
        this.operation = new Operation("group");
    }

    void launch() {
        comm.launch(builder, operation);
    }
}
