package io.jccl.net.ib;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class WorkIdTest {

    @Test
    void fieldsRoundTrip() {
        long id = WorkId.of(WorkId.DATA, 31, 127, -5);
        assertEquals(WorkId.DATA, WorkId.kind(id));
        assertEquals(31, WorkId.slot(id));
        assertEquals(127, WorkId.qpIndex(id));
        assertEquals(-5, WorkId.sequence(id), "the sequence wraps as an int");
        long flush = WorkId.of(WorkId.FLUSH, 3, 255, 1);
        assertEquals(255, WorkId.qpIndex(flush));
        assertEquals(WorkId.FLUSH, WorkId.kind(flush));
    }
}
