package io.jccl.core.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One round of connection set-up: rings at init, peers of send/recv, trees on first use. */
@Name("io.jccl.ConnectionSetup")
@Label("JCCL Connection Setup")
@Category("JCCL")
@Description("Connections made together, from the exchange of handles to the last accept")
@StackTrace(false)
public final class ConnectionSetupEvent extends jdk.jfr.Event {
    @Label("Rank")
    public int rank;

    @Label("Connections")
    public int connections;

    @Label("Shared memory")
    @Description("Connections through shared memory, the others through the transport")
    public int sharedMemory;

    @Label("First")
    @Description("The first connection's name, e.g. channel 0 send to rank 1")
    public String first;

    @Label("Failed")
    public boolean failed;
}
