package io.jccl.net.ib;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The cache's book-keeping; registration itself is exercised on a real device by IbTransportTest. */
class RegistrationCacheTest {
    private final List<String> calls = new ArrayList<>();
    private long nextKey = 1;

    private final RegistrationCache cache = new RegistrationCache(new RegistrationCache.Registrar() {
        @Override
        public RegistrationCache.Registration register(long address, long length) {
            calls.add("reg 0x" + Long.toHexString(address) + "+" + length);
            return new RegistrationCache.Registration(nextKey, address, length, (int) nextKey, (int) nextKey++);
        }

        @Override
        public void release(RegistrationCache.Registration r) {
            calls.add("dereg 0x" + Long.toHexString(r.address));
        }
    });

    @Test
    void rangesArePageAlignedAndSubRangesShareTheRegistration() throws Exception {
        RegistrationCache.Registration whole = cache.acquire(0x10010, 3 * 4096);
        assertEquals(List.of("reg 0x10000+16384"), calls, "page-aligned outwards");
        RegistrationCache.Registration part = cache.acquire(0x11000, 100);
        assertSame(whole, part);
        assertEquals(2, whole.references);
        assertEquals(1, calls.size(), "no second registration");

        RegistrationCache.Registration other = cache.acquire(0x40000, 1);
        assertNotSame(whole, other);
        assertEquals(2, cache.size());

        cache.release(part);
        assertEquals(2, cache.size(), "one reference left");
        cache.release(whole);
        assertEquals(1, cache.size());
        assertEquals("dereg 0x10000", calls.get(calls.size() - 1));
        assertThrows(IllegalStateException.class, () -> cache.release(whole), "double release");
    }

    @Test
    void zeroLengthBuffersStillGetAPage() throws Exception {
        cache.acquire(0x5000, 0);
        assertEquals(List.of("reg 0x5000+4096"), calls);
    }

    @Test
    void clearReleasesEverything() throws Exception {
        cache.acquire(0x1000, 10);
        cache.acquire(0x9000, 10);
        cache.clear();
        assertEquals(0, cache.size());
        assertEquals(4, calls.size());
    }
}
