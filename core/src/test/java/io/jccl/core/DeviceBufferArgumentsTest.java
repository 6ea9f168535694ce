package io.jccl.core;

import io.jccl.core.kernel.MemoryKind;
import io.jccl.cuda.Cuda;
import io.jccl.cuda.DeviceBuffer;
import io.jccl.spi.DataType;
import io.jccl.spi.ReduceOp;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the engine makes of a buffer's memory: host memory is {@link MemoryKind#HOST} everywhere; on a
 * GPU machine device memory is {@link MemoryKind#CUDA}, and a collective refuses a mix of host and
 * device buffers, and device buffers passed without a CUDA stream, with one clear line.
 */
class DeviceBufferArgumentsTest {

    @Test
    void hostMemoryIsHostWithOrWithoutAGpu() {
        try (Arena arena = Arena.ofConfined()) {
            assertEquals(MemoryKind.HOST, MemoryKind.of(arena.allocate(64)));
            assertEquals(MemoryKind.HOST, MemoryKind.of(MemorySegment.ofArray(new byte[64])));
        }
    }

    @Test
    void aCollectiveRefusesAMixOfHostAndDeviceBuffersClearly() {
        assumeTrue(Cuda.isAvailable(), () -> "no GPU here: " + Cuda.unavailabilityCause().getMessage());
        try (LocalRanks one = new LocalRanks(1, DataPath.NETWORK.config().build());
             Arena arena = Arena.ofShared();
             DeviceBuffer device = Cuda.device(0).allocate(4096);
             DeviceBuffer pinned = Cuda.device(0).allocatePinnedHost(4096)) {
            assertEquals(MemoryKind.CUDA, MemoryKind.of(device.segment()));
            assertEquals(MemoryKind.HOST, MemoryKind.of(pinned.segment()));
            Communicator comm = one.comms[0];
            MemorySegment host = arena.allocate(4096);
            JcclException mixed = assertThrows(JcclException.class,
                    () -> comm.allReduce(device.segment(), host, 1024, DataType.FLOAT32, ReduceOp.SUM));
            assertTrue(mixed.getMessage().contains("both must be host memory, or both device memory"), mixed.getMessage());
            JcclException onDevice = assertThrows(JcclException.class,
                    () -> comm.allReduce(device.segment(), device.segment(), 1024, DataType.FLOAT32, ReduceOp.SUM));
            assertTrue(onDevice.getMessage().contains("pass the stream"), onDevice.getMessage());
            // pinned host memory is host memory: the collective runs
            comm.allReduce(pinned.segment(), pinned.segment(), 1024, DataType.FLOAT32, ReduceOp.SUM);
        }
    }
}
