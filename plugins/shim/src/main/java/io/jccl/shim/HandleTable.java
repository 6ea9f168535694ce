package io.jccl.shim;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.function.LongFunction;

/**
 * Java objects behind the {@code void*} values NCCL holds (comms, memory handles, contexts), without
 * a map lookup per call: a handle encodes an index into this table.
 *
 * <p>A handle is {@code 0x4A} in the top byte (so it is never NULL nor NCCL's 0x1 hint), the
 * {@link Kind} in the next four bits, a 20-bit generation and a 32-bit index. A stale handle (its
 * slot reused since) or garbage fails {@link #get} instead of reaching the wrong object. Requests
 * live in their comm ({@link BridgedComm}) and use the low 32 bits for comm index and slot.
 *
 * <p>{@link #add} and {@link #remove} are setup-path calls and synchronize; {@link #get} is
 * lock-free and allocation-free, for the data path.
 *
 * @param <T> what the table holds
 */
final class HandleTable<T> {
    static final long TAG = 0x4AL << 56;
    private static final long TAG_MASK = 0xFFL << 56;
    private static final int INDEX_BITS = 32;
    private static final int GENERATION_BITS = 20;
    private static final int GENERATION_MASK = (1 << GENERATION_BITS) - 1;
    private static final VarHandle SLOTS = MethodHandles.arrayElementVarHandle(Entry[].class);

    /** What a handle points at; part of the handle, so a comm is never mistaken for a memory handle. */
    enum Kind {
        CONTEXT(1), LISTEN(2), SEND(3), RECV(4), REGISTRATION(5), REQUEST(6), COLL_LISTEN(7), COLL(8), DONE_SEND(9);

        final int code;

        Kind(int code) {
            this.code = code;
        }
    }

    private record Entry(Object value, Kind kind, int generation) {
    }

    private volatile Entry[] slots = new Entry[64];
    private int[] generations = new int[64];
    private int[] free = new int[64];
    private int freeCount;
    private int used;

    /** @return the handle of {@code value}, now in the table */
    long add(T value, Kind kind) {
        return add(handle -> value, kind);
    }

    /**
     * Adds the value {@code factory} makes from its own handle (a comm derives its requests' handles
     * from its own).
     *
     * @return the handle
     */
    synchronized long add(LongFunction<T> factory, Kind kind) {
        int index;
        if (freeCount > 0) {
            index = free[--freeCount];
        } else {
            if (used == slots.length) {
                int grown = slots.length * 2;
                slots = Arrays.copyOf(slots, grown);
                generations = Arrays.copyOf(generations, grown);
                free = Arrays.copyOf(free, grown);
            }
            index = used++;
        }
        int generation = generations[index] = (generations[index] + 1) & GENERATION_MASK;
        long handle = handle(kind, generation, index);
        SLOTS.setRelease(slots, index, new Entry(factory.apply(handle), kind, generation));
        return handle;
    }

    static long handle(Kind kind, int generation, int index) {
        return TAG | (long) kind.code << 52 | (long) generation << INDEX_BITS | (index & 0xFFFFFFFFL);
    }

    /**
     * A send request that completed inside isend: no slot, the size in the index bits. shim_net.c's
     * test() recognises it by its top 12 bits ({@code JCCL_DONE_SEND_PREFIX}) and answers it in C.
     */
    static long doneSend(int size) {
        return handle(Kind.DONE_SEND, 0, size);
    }

    static boolean tagged(long handle, Kind kind) {
        return (handle & TAG_MASK) == TAG && (int) (handle >>> 52 & 0xF) == kind.code;
    }

    static int index(long handle) {
        return (int) handle;
    }

    static int generation(long handle) {
        return (int) (handle >>> INDEX_BITS) & GENERATION_MASK;
    }

    /** @return the object behind {@code handle} if it is a live handle of this kind, else {@code null} */
    @SuppressWarnings("unchecked")
    T get(long handle, Kind kind) {
        if (!tagged(handle, kind)) {
            return null;
        }
        int index = index(handle);
        Entry[] s = slots;
        if (index < 0 || index >= s.length) {
            return null;
        }
        Entry e = (Entry) SLOTS.getAcquire(s, index);
        return e != null && e.generation == generation(handle) && e.kind == kind ? (T) e.value : null;
    }

    /** @return the live object at {@code index} of {@code generation}, whatever its kind, else {@code null} */
    @SuppressWarnings("unchecked")
    T get(int index, int generation) {
        Entry[] s = slots;
        if (index < 0 || index >= s.length) {
            return null;
        }
        Entry e = (Entry) SLOTS.getAcquire(s, index);
        return e != null && e.generation == generation ? (T) e.value : null;
    }

    /** Same as {@link #get} for a handle that may be of either kind. */
    T get(long handle, Kind kind, Kind otherKind) {
        T v = get(handle, kind);
        return v != null ? v : get(handle, otherKind);
    }

    /** Frees the slot of {@code handle}; does nothing for a handle that is not live. */
    synchronized void remove(long handle) {
        int index = index(handle);
        Entry[] s = slots;
        if ((handle & TAG_MASK) != TAG || index < 0 || index >= used) {
            return;
        }
        Entry e = (Entry) SLOTS.getAcquire(s, index);
        if (e == null || e.generation != generation(handle)) {
            return;
        }
        SLOTS.setRelease(s, index, (Entry) null);
        free[freeCount++] = index;
    }

    /** @return how many handles are live */
    synchronized int size() {
        return used - freeCount;
    }

    /** @return a handle formatted for messages */
    static String describe(long handle) {
        return "0x" + Long.toHexString(handle);
    }
}
