package io.jccl.core.observe;

import jdk.jfr.Category;
import jdk.jfr.DataAmount;
import jdk.jfr.Description;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/** One collective or group of sends and receives, from its issue to its end on this rank. */
@Name("io.jccl.Collective")
@Label("JCCL Collective")
@Category("JCCL")
@Description("A collective (or a group of sends and receives) on one rank, from issue to completion")
@StackTrace(false)
public final class CollectiveEvent extends jdk.jfr.Event {
    @Label("Operation")
    @Description("e.g. allReduce, broadcast, group(send, recv)")
    public String operation;

    @Label("Bytes")
    @Description("The buffer the call moves: all-reduce's, the all-gather's output")
    @DataAmount(DataAmount.BYTES)
    public long bytes;

    @Label("Algorithm")
    @Description("LL (on the calling thread), Ring, Tree, P2P or local")
    public String algorithm;

    @Label("Rank")
    public int rank;

    @Label("Ranks")
    public int nranks;

    @Label("Sequence")
    @Description("The operation's number on this communicator")
    public long sequence;

    @Label("Failed")
    public boolean failed;
}
