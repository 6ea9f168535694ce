package io.jccl.core.observe;

import jdk.jfr.EventType;

/**
 * Creates JCCL's events only while a recording wants them: each check is a read of the event
 * type's state, and nothing is allocated when it is off (the small-message path stays
 * allocation-free).
 */
public final class Events {
    private static final EventType COLLECTIVE = EventType.getEventType(CollectiveEvent.class);
    private static final EventType COMMUNICATOR = EventType.getEventType(CommunicatorEvent.class);
    private static final EventType CONNECTIONS = EventType.getEventType(ConnectionSetupEvent.class);

    private Events() {
    }

    /** @return a started collective event, or {@code null} when no recording wants one */
    public static CollectiveEvent beginCollective(String operation, long bytes, String algorithm, int rank, int nranks,
                                                  long sequence) {
        if (!COLLECTIVE.isEnabled()) {
            return null;
        }
        CollectiveEvent e = new CollectiveEvent();
        e.operation = operation;
        e.bytes = bytes;
        e.algorithm = algorithm;
        e.rank = rank;
        e.nranks = nranks;
        e.sequence = sequence;
        e.begin();
        return e;
    }

    /** Ends and records {@code e}, if there is one. */
    public static void end(CollectiveEvent e, boolean failed) {
        if (e != null) {
            e.failed = failed;
            e.commit();
        }
    }

    /** @return a started communicator event, or {@code null} */
    public static CommunicatorEvent beginCommunicator(String action, int rank, int nranks) {
        if (!COMMUNICATOR.isEnabled()) {
            return null;
        }
        CommunicatorEvent e = new CommunicatorEvent();
        e.action = action;
        e.rank = rank;
        e.nranks = nranks;
        e.begin();
        return e;
    }

    /** Ends and records {@code e}, if there is one. */
    public static void end(CommunicatorEvent e, String transport, int channels, String detail) {
        if (e != null) {
            e.transport = transport;
            e.channels = channels;
            e.detail = detail;
            e.commit();
        }
    }

    /** @return a started connection set-up event, or {@code null} */
    public static ConnectionSetupEvent beginConnections(int rank, int connections, int sharedMemory, String first) {
        if (!CONNECTIONS.isEnabled()) {
            return null;
        }
        ConnectionSetupEvent e = new ConnectionSetupEvent();
        e.rank = rank;
        e.connections = connections;
        e.sharedMemory = sharedMemory;
        e.first = first;
        e.begin();
        return e;
    }

    /** Ends and records {@code e}, if there is one. */
    public static void end(ConnectionSetupEvent e, boolean failed) {
        if (e != null) {
            e.failed = failed;
            e.commit();
        }
    }
}
