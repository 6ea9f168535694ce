package io.jccl.net.ib;

import java.util.ArrayList;
import java.util.List;

/**
 * Memory registrations of one protection domain, shared by every comm on it (NCCL's
 * {@code reg.cc}): a buffer is registered once, page-aligned, and later {@code regMr} calls on any
 * range inside it reuse that registration with a reference count. {@code deregMr} of the last
 * reference releases it.
 *
 * <p>Thread-safe: setup threads of several communicators register concurrently.
 */
final class RegistrationCache {
    static final long PAGE = 4096;

    /** Registers and releases with the verbs; separate so the cache's book-keeping is testable alone. */
    interface Registrar {
        /** @return a new registration of {@code [address, address + length)} */
        Registration register(long address, long length) throws Exception;

        void release(Registration registration) throws Exception;
    }

    /** One {@code ibv_mr}: its page-aligned range and keys, and how many handles use it. */
    static final class Registration {
        final long mr;
        final long address;
        final long length;
        final int lkey;
        final int rkey;
        int references;

        Registration(long mr, long address, long length, int lkey, int rkey) {
            this.mr = mr;
            this.address = address;
            this.length = length;
            this.lkey = lkey;
            this.rkey = rkey;
        }

        boolean covers(long start, long end) {
            return start >= address && end <= address + length;
        }
    }

    private final Registrar registrar;
    private final List<Registration> registrations = new ArrayList<>();

    RegistrationCache(Registrar registrar) {
        this.registrar = registrar;
    }

    /**
     * @return a registration covering {@code [address, address + length)}, with one more reference
     * @throws Exception what the registrar threw
     */
    synchronized Registration acquire(long address, long length) throws Exception {
        long start = address & -PAGE;
        long end = (address + Math.max(length, 1) + PAGE - 1) & -PAGE;
        for (Registration r : registrations) {
            if (r.covers(start, end)) {
                r.references++;
                return r;
            }
        }
        Registration r = registrar.register(start, end - start);
        r.references = 1;
        registrations.add(r);
        return r;
    }

    /**
     * Drops one reference; the last one releases the registration.
     *
     * @throws Exception what the registrar threw
     */
    synchronized void release(Registration r) throws Exception {
        if (r.references <= 0 || !registrations.contains(r)) {
            throw new IllegalStateException("registration already released");
        }
        if (--r.references == 0) {
            registrations.remove(r);
            registrar.release(r);
        }
    }

    /** @return how many distinct registrations are held */
    synchronized int size() {
        return registrations.size();
    }

    /** Releases everything, whatever the references (plugin close). */
    synchronized void clear() {
        for (Registration r : registrations) {
            try {
                registrar.release(r);
            } catch (Exception ignored) {
                // closing anyway
            }
        }
        registrations.clear();
    }
}
