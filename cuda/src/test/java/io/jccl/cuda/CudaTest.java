package io.jccl.cuda;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The CUDA binding. Tests that need a GPU skip with {@link Cuda#unavailabilityCause()} where there is
 * none; {@code plugins/shim/nccl-tests/gpu-run.sh}'s machine runs them for real.
 */
class CudaTest {

    private static void assumeGpu() {
        assumeTrue(Cuda.isAvailable(), () -> "no GPU here: " + Cuda.unavailabilityCause().getMessage());
    }

    @Test
    void withoutAGpuEveryCallSaysWhyInOneLineAndHostMemoryIsHost() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment host = arena.allocate(64);
            // pageable host memory is HOST with or without CUDA
            assertEquals(PointerKind.HOST, Cuda.pointerKind(host));
        }
        if (Cuda.isAvailable()) {
            assertThrows(IllegalArgumentException.class, () -> Cuda.device(Cuda.deviceCount()));
            return;
        }
        String cause = Cuda.unavailabilityCause().getMessage();
        assertNotNull(cause);
        assertFalse(cause.contains("\n"), cause);
        assertEquals(0, Cuda.deviceCount());
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> Cuda.device(0));
        assertTrue(e.getMessage().startsWith("CUDA cannot be used: ") && e.getMessage().contains(cause), e.getMessage());
    }

    @Test
    void aGpuDescribesItself() {
        assumeGpu();
        assertTrue(Cuda.driverVersion() >= 11000, "driver version " + Cuda.driverVersion());
        CudaDevice gpu = Cuda.device(0);
        assertTrue(gpu.name().length() > 0);
        assertTrue(gpu.totalMemory() > 1L << 30, gpu.toString());
        assertTrue(gpu.computeCapability().matches("\\d+\\.\\d"), gpu.computeCapability());
        assertTrue(gpu.pciBusId().matches("\\p{XDigit}{4}:\\p{XDigit}{2}:\\p{XDigit}{2}\\.0"), gpu.pciBusId());
        assertTrue(gpu == Cuda.device(0));
    }

    @Test
    void bytesRoundTripThroughDeviceMemoryAndEachKindIsKnown() {
        assumeGpu();
        CudaDevice gpu = Cuda.device(0);
        long n = (4 << 20) + 3; // odd size: no copy may round
        try (Arena arena = Arena.ofConfined();
             DeviceBuffer a = gpu.allocate(n);
             DeviceBuffer b = gpu.allocate(n);
             DeviceBuffer pinned = gpu.allocatePinnedHost(n)) {
            MemorySegment source = arena.allocate(n);
            for (long i = 0; i < n; i++) {
                source.set(JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            assertEquals(PointerKind.DEVICE, Cuda.pointerKind(a.segment()));
            assertEquals(PointerKind.PINNED_HOST, Cuda.pointerKind(pinned.segment()));
            assertEquals(PointerKind.HOST, Cuda.pointerKind(source));
            Cuda.copy(a.segment(), source);               // host to device
            Cuda.copy(b.segment(), a.segment());          // device to device
            Cuda.copy(pinned.segment(), b.segment());     // device to pinned host
            assertEquals(-1, pinned.segment().mismatch(source), "bytes changed on the way through the GPU");
        }
    }

    /**
     * Segment kinds are remembered by address and size (a collective asks for each buffer), and
     * forgotten when JCCL frees CUDA memory: the freed address is no longer device memory.
     */
    @Test
    @SuppressWarnings("restricted")
    void aRememberedKindIsForgottenWhenTheMemoryIsFreed() {
        assumeGpu();
        DeviceBuffer b = Cuda.device(0).allocate(1 << 16);
        MemorySegment s = b.segment();
        assertEquals(PointerKind.DEVICE, Cuda.pointerKind(s));
        assertEquals(PointerKind.DEVICE, Cuda.pointerKind(s));
        long address = s.address();
        long size = s.byteSize();
        b.close();
        assertEquals(PointerKind.HOST, Cuda.pointerKind(MemorySegment.ofAddress(address).reinterpret(size)),
                "a freed device address must not keep its remembered kind");
    }

    @Test
    void aStreamRunsWorkInOrderAndItsEventSaysWhenItIsDone() {
        assumeGpu();
        CudaDevice gpu = Cuda.device(0);
        long n = 64 << 20;
        try (DeviceBuffer device = gpu.allocate(n);
             DeviceBuffer pinned = gpu.allocatePinnedHost(n);
             CudaStream stream = gpu.createStream()) {
            pinned.segment().fill((byte) 0);
            stream.fillAsync(device.segment(), (byte) 0x5A);
            stream.copyAsync(pinned.segment(), device.segment());
            try (CudaEvent done = stream.record()) {
                done.synchronize();
                assertTrue(done.isDone());
            }
            assertTrue(stream.isIdle());
            byte[] expected = new byte[4096];
            java.util.Arrays.fill(expected, (byte) 0x5A);
            assertArrayEquals(expected, pinned.segment().asSlice(n - 4096, 4096).toArray(JAVA_BYTE));
            assertEquals(0x5A5A5A5A5A5A5A5AL, pinned.segment().get(JAVA_LONG, 0));
        }
    }

    @Test
    void anotherLibrarysDevicePointerCanBeWrappedAndAHostOneIsRefused() {
        assumeGpu();
        try (Arena arena = Arena.ofConfined(); DeviceBuffer owned = Cuda.device(0).allocate(1 << 20)) {
            MemorySegment wrapped = Cuda.wrapDevicePointer(owned.segment().address(), 1 << 20);
            assertEquals(owned.segment().address(), wrapped.address());
            assertEquals(1 << 20, wrapped.byteSize());
            MemorySegment host = arena.allocate(16);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> Cuda.wrapDevicePointer(host.address(), 16));
            assertTrue(e.getMessage().contains("not a CUDA device pointer"), e.getMessage());
        }
    }

    @Test
    void theCallersContextIsLeftAsItWasAndAFreedBufferCannotBeUsed() {
        assumeGpu();
        MemorySegment before = Cuda.currentContext();
        DeviceBuffer pinned = Cuda.device(0).allocatePinnedHost(4096);
        pinned.segment().set(JAVA_LONG, 0, 42);
        pinned.close();
        pinned.close(); // idempotent
        assertEquals(before, Cuda.currentContext(), "JCCL changed the thread's current CUDA context");
        assertThrows(IllegalStateException.class, () -> pinned.segment().get(JAVA_LONG, 0));
        assertThrows(IllegalArgumentException.class, () -> Cuda.device(0).allocate(0));
    }
}
