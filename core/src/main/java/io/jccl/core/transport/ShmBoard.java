package io.jccl.core.transport;

import io.jccl.core.JcclException;
import io.jccl.core.bootstrap.Bootstrap;
import io.jccl.spi.NetResult;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;

/**
 * One shared-memory file that every rank of a communicator maps, when all ranks share a host: the
 * board of the low-latency protocol. Each rank owns two areas (one per parity of the operation
 * number); an area is a 16-byte header, whose first word is the flag, followed by the data, so
 * that a small contribution and its flag travel in one cache line (NCCL's LL idea: no separate
 * counter to read). Layout:
 *
 * <pre>
 *   0     magic "JCCLLLB1", cookie (random, proves a rank mapped the right file), ranks, area bytes
 *   4096  areas: area (parity, rank) at 4096 + (parity * ranks + rank) * areaBytes
 *   area: flag (operation number, written last with release) | word | data ...
 * </pre>
 *
 * Rank 0 creates the file and names it to the others through the bootstrap; each maps it and says
 * so; rank 0 then deletes the file, so nothing is left behind once all have mapped it.
 */
public final class ShmBoard {
    static final long MAGIC = 0x3142_4C4C_4C43_434AL; // "JCCLLLB1", little-endian
    static final long AREAS = 4096;
    /** Bytes of an area's header: the flag, then a word the protocol uses (the call's signature). */
    public static final int HEADER = 16;
    /** Acquire/release access to the flags; the same on every rank's mapping. */
    public static final VarHandle FLAG = ValueLayout.JAVA_LONG.varHandle();

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int NAME_MAGIC = 0x4c4c4231; // "LLB1"

    private final MemorySegment mapped;
    private final int ranks;
    private final int areaBytes;
    private final long dataBytes;

    private ShmBoard(MemorySegment mapped, int ranks, int areaBytes, long dataBytes) {
        this.mapped = mapped;
        this.ranks = ranks;
        this.areaBytes = areaBytes;
        this.dataBytes = dataBytes;
    }

    /**
     * Makes the board of {@code ranks} ranks, each contribution at most {@code dataBytes}, with
     * room for a block of {@code blockBytes} after it ({@link #blockAt}); every rank calls it at
     * the same point, bounded by the bootstrap's waits.
     */
    public static ShmBoard establish(Bootstrap bootstrap, int ranks, long dataBytes, long blockBytes, int tag,
                                     Arena arena) {
        int areaBytes = (int) (blockAt(dataBytes) + ((blockBytes + 63) & ~63L));
        long size = AREAS + 2L * ranks * areaBytes;
        int rank = bootstrap.rank();
        if (rank == 0) {
            Path path = null;
            try {
                path = Files.createTempFile(ShmBuffer.directory(), "jccl-ll-" + ProcessHandle.current().pid() + "-", "");
                long cookie = RANDOM.nextLong();
                MemorySegment m = createMapped(path, size, arena);
                m.set(ValueLayout.JAVA_LONG, 8, cookie);
                m.set(ValueLayout.JAVA_INT, 16, ranks);
                m.set(ValueLayout.JAVA_INT, 20, areaBytes);
                m.set(ValueLayout.JAVA_LONG, 0, MAGIC);
                byte[] p = path.toString().getBytes(StandardCharsets.UTF_8);
                byte[] name = ByteBuffer.allocate(12 + p.length).putInt(NAME_MAGIC).putLong(cookie).put(p).array();
                for (int r = 1; r < ranks; r++) {
                    bootstrap.send(r, tag, name);
                }
                for (int r = 1; r < ranks; r++) {
                    bootstrap.receive(r, tag); // "mapped": the file may go
                }
                return new ShmBoard(m, ranks, areaBytes, dataBytes);
            } catch (IOException e) {
                throw new JcclException(NetResult.SYSTEM_ERROR, JcclException.NO_RANK, "low-latency board: cannot "
                        + "create " + size + " bytes of shared memory in " + ShmBuffer.directory() + ": " + e.getMessage()
                        + " (free space there, or set NCCL_PROTO=^LL)", e);
            } finally {
                ShmBuffer.deleteQuietly(path);
            }
        }
        byte[] name = bootstrap.receive(0, tag);
        ByteBuffer in = ByteBuffer.wrap(name);
        if (name.length < 12 || in.getInt() != NAME_MAGIC) {
            throw new JcclException(NetResult.INTERNAL_ERROR, 0, "rank 0 did not name a low-latency board: do all "
                    + "ranks agree on NCCL_PROTO, NCCL_SHM_DISABLE and NCCL_HOSTID?", null);
        }
        long cookie = in.getLong();
        Path path = Path.of(StandardCharsets.UTF_8.decode(in).toString());
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() != size) {
                throw new IOException("it holds " + ch.size() + " bytes, not " + size);
            }
            MemorySegment m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            if (m.get(ValueLayout.JAVA_LONG, 0) != MAGIC || m.get(ValueLayout.JAVA_LONG, 8) != cookie
                    || m.get(ValueLayout.JAVA_INT, 16) != ranks || m.get(ValueLayout.JAVA_INT, 20) != areaBytes) {
                throw new IOException("it is not the board rank 0 made for this communicator");
            }
            bootstrap.send(0, tag, new byte[1]);
            return new ShmBoard(m, ranks, areaBytes, dataBytes);
        } catch (IOException | RuntimeException e) {
            throw new JcclException(NetResult.SYSTEM_ERROR, 0, "cannot map rank 0's low-latency board " + path + ": "
                    + e.getMessage() + " (ranks that share a host id must share /dev/shm: give ranks in separate "
                    + "containers different NCCL_HOSTID values, or set NCCL_SHM_DISABLE=1)", e);
        }
    }

    private static MemorySegment createMapped(Path path, long size, Arena arena) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            // Every page now: a full /dev/shm fails here, not later with SIGBUS on a mapped page.
            ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(size, 1 << 20));
            for (long done = 0; done < size; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), size - done));
                done += ch.write(zeros, done);
            }
            return ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
        }
    }

    /** @return the area of {@code rank} for operations of parity {@code parity}: header, then data */
    public MemorySegment area(int parity, int rank) {
        return mapped.asSlice(AREAS + ((long) parity * ranks + rank) * areaBytes, areaBytes);
    }

    /** @return where in an area the block after {@code dataBytes} of data starts (a cache line of its own) */
    public static long blockAt(long dataBytes) {
        return (HEADER + dataBytes + 63) & ~63L;
    }

    /** @return bytes of data an area holds after its header */
    public long dataBytes() {
        return dataBytes;
    }

    /** @return where in an area the block after the data starts */
    public long blockAt() {
        return blockAt(dataBytes);
    }
}
