package io.jccl.core;

import io.jccl.core.collective.Operation;
import io.jccl.core.collective.OperationBuilder;
import io.jccl.core.device.StagedCall;
import io.jccl.cuda.CudaStream;
import java.util.function.Supplier;

/**
 * What one communicator collected in a group, and the handle its calls returned. A group holds
 * either operations on host buffers or stream-ordered ones on device buffers, all on one CUDA stream:
 * the stream's part of the whole group is one {@link StagedCall} (copies in as each call is made, one
 * hand-over to the proxy at the group's end, copies out after it), so every send and receive of the
 * group is in flight at once, as NCCL's grouped calls are.
 */
final class PendingGroup {
    final Communicator comm;
    final OperationBuilder builder;
    final Operation operation;
    private boolean hostOperations;
    private CudaStream stream;
    private StagedCall streamCall;

    PendingGroup(Communicator comm, OperationBuilder builder) {
        this.comm = comm;
        this.builder = builder;
        this.operation = new Operation("group");
    }

    /** Before a call on host buffers joins the group. */
    void acceptHostOperation(int rank) {
        if (streamCall != null) {
            throw mixed(rank);
        }
        hostOperations = true;
    }

    /**
     * Before a stream-ordered call joins the group.
     *
     * @param begin starts the group's stream call on {@code s}, the first time
     * @return the group's stream call, which stages the buffers of every stream-ordered call in it
     */
    StagedCall acceptStreamOperation(int rank, CudaStream s, Supplier<StagedCall> begin) {
        if (hostOperations) {
            throw mixed(rank);
        }
        if (streamCall == null) {
            streamCall = begin.get();
            stream = s;
            operation.setGate(streamCall);
        } else if (stream.handle().address() != s.handle().address() || stream.device().ordinal() != s.device().ordinal()) {
            throw JcclException.invalidUsage("rank " + rank + ": a group's stream-ordered operations on one communicator "
                    + "must share one CUDA stream (0x" + Long.toHexString(stream.handle().address()) + ", then 0x"
                    + Long.toHexString(s.handle().address()) + "): make the streams wait on each other with events and "
                    + "issue the group on one");
        }
        return streamCall;
    }

    private static JcclException mixed(int rank) {
        return JcclException.invalidUsage("rank " + rank + ": a group mixes operations on host buffers and "
                + "stream-ordered ones on device buffers for one communicator: issue them in separate groups");
    }

    void launch() {
        try {
            comm.launch(builder, operation);
        } catch (RuntimeException e) {
            if (streamCall != null) {
                streamCall.cancel();
            }
            throw e;
        }
        if (streamCall != null) {
            streamCall.enqueue();
        }
    }
}
