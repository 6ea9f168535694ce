package io.jccl.core.observe;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** A communicator's init (its duration is the join), close or abort. */
@Name("io.jccl.Communicator")
@Label("JCCL Communicator")
@Category("JCCL")
@Description("A communicator's life cycle on one rank: init (the event lasts the join), close or abort")
@StackTrace(false)
public final class CommunicatorEvent extends jdk.jfr.Event {
    @Label("Action")
    @Description("init, close, abort, shrink or grow")
    public String action;

    @Label("Rank")
    public int rank;

    @Label("Ranks")
    public int nranks;

    @Label("Transport")
    public String transport;

    @Label("Channels")
    public int channels;

    @Label("Detail")
    @Description("What carries the rings; the failure, for an abort")
    public String detail;
}
