package io.jccl.core.transport;

import io.jccl.core.JcclException;
import io.jccl.spi.NetResult;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;

/**
 * The memory one shared-memory connection lives in: a file in {@code /dev/shm} that the
 * receiving rank creates and both ranks map. Layout (each counter on its own cache line, so that
 * the two ranks do not write the same line):
 *
 * <pre>
 *   0     magic "JCCLSHM1", cookie (random, proves the sender mapped the right file), slot bytes
 *   64    tail: messages the sender published       (sender writes, release; receiver reads, acquire)
 *   128   head: messages the receiver consumed       (receiver writes, release; sender reads, acquire)
 *   192   sizes: bytes of each of the 8 slots       (sender writes before publishing)
 *   4096  the slots: NCCL_STEPS x slot bytes
 * </pre>
 *
 * The sender deletes the file once it has mapped it, and the receiver when it closes, so nothing
 * is left behind once both ranks are connected; the mappings live until the communicator's arena
 * closes.
 */
final class ShmBuffer {
    static final long MAGIC = 0x314D48534C43434AL; // "JCCLSHM1", little-endian
    static final long COOKIE = 8;
    static final long SLOT_BYTES = 16;
    static final long TAIL = 64;
    static final long HEAD = 128;
    static final long SIZES = 192;
    static final long DATA = 4096;

    /** Acquire/release access to the counters; the same on both ranks of the mapping. */
    static final VarHandle COUNTER = ValueLayout.JAVA_LONG.varHandle();

    private static final SecureRandom RANDOM = new SecureRandom();

    private ShmBuffer() {
    }

    /** Where the files go: {@code /dev/shm} where it exists (memory, not disk), else the temporary directory. */
    static Path directory() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    /** The receiving side: a new, zeroed, fully allocated file, mapped. */
    static Created create(Arena arena, int slotBytes, String name) {
        long size = DATA + (long) Connection.STEPS * slotBytes;
        long cookie = RANDOM.nextLong();
        Path path = null;
        try {
            path = Files.createTempFile(directory(), "jccl-shm-" + ProcessHandle.current().pid() + "-", "");
            try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                // Write every page now: tmpfs allocates on write, and a full /dev/shm must fail
                // here with an error rather than later with SIGBUS on a mapped page.
                ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
                for (long done = 0; done < size; ) {
                    zeros.clear().limit((int) Math.min(zeros.capacity(), size - done));
                    done += ch.write(zeros, done);
                }
                MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
                m.set(ValueLayout.JAVA_LONG, COOKIE, cookie);
                m.set(ValueLayout.JAVA_INT, SLOT_BYTES, slotBytes);
                m.set(ValueLayout.JAVA_LONG, 0, MAGIC);
                return new Created(path, cookie, m);
            }
        } catch (IOException | RuntimeException e) {
            deleteQuietly(path);
            throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, name + ": cannot create "
                    + size + " bytes of shared memory in " + directory() + ": " + e.getMessage()
                    + " (free space there, or set NCCL_SHM_DISABLE=1 to connect through the network instead)", e);
        }
    }

    /** The sending side: maps the file the receiver created and checks it is that file. */
    static MemorySegment open(Arena arena, Path path, long cookie, int slotBytes, int peer, String name) {
        long size = DATA + (long) Connection.STEPS * slotBytes;
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() != size) {
                throw new IOException("it holds " + ch.size() + " bytes, not " + size);
            }
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            if (m.get(ValueLayout.JAVA_LONG, 0) != MAGIC || m.get(ValueLayout.JAVA_LONG, COOKIE) != cookie
                    || m.get(ValueLayout.JAVA_INT, SLOT_BYTES) != slotBytes) {
                throw new IOException("it is not the buffer rank " + peer + " made for this connection");
            }
            return m;
        } catch (IOException | RuntimeException e) {
            throw new JcclException(NetResult.SYSTEM_ERROR, peer, name + ": cannot map rank " + peer
                    + "'s shared memory " + path + ": " + e.getMessage() + " (ranks that share a host id must "
                    + "share /dev/shm: give ranks in separate containers different NCCL_HOSTID values, or set "
                    + "NCCL_SHM_DISABLE=1)", e);
        } finally {
            deleteQuietly(path);
        }
    }

    static void deleteQuietly(Path path) {
        if (path != null) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException ignored) {
                // A leftover file in /dev/shm is harmless and named after the process that made it.
            }
        }
    }

    /** @return the slots of a mapped buffer */
    static MemorySegment slots(MemorySegment mapped, int slotBytes) {
        return mapped.asSlice(DATA, (long) Connection.STEPS * slotBytes);
    }

    /** What the receiving side made: the file to name to the sender, and its mapping. */
    record Created(Path path, long cookie, MemorySegment mapped) {
    }
}
