package io.jccl.net.ib;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CtsFifoTest {

    @Test
    void entriesAre64BytesWithTheStampAtBothEnds() {
        assertEquals(64, CtsFifo.ENTRY, "NCCL's ncclIbSendFifo is 64 bytes too");
        assertEquals(0, CtsFifo.IDX);
        assertEquals(CtsFifo.ENTRY - 8, CtsFifo.IDX_CHECK);
        assertEquals(512, IbComm.SLOT_BYTES, "8 entries per grouped receive");
        assertEquals(32, IbComm.SLOTS);
        assertEquals(0, IbComm.SLOTS & (IbComm.SLOTS - 1), "slot arithmetic needs a power of two");
    }
}
