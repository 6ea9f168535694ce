package io.jccl.spi;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The value types must keep NCCL's numbering so that they cross the C ABI unchanged. */
class ValueTypesTest {

    @Test
    void resultCodesAreNcclResultT() {
        int[] expected = {0, 1, 2, 3, 4, 5, 6, 7, 8};
        NetResult[] results = {NetResult.SUCCESS, NetResult.UNHANDLED_CUDA_ERROR, NetResult.SYSTEM_ERROR,
                NetResult.INTERNAL_ERROR, NetResult.INVALID_ARGUMENT, NetResult.INVALID_USAGE,
                NetResult.REMOTE_ERROR, NetResult.IN_PROGRESS, NetResult.TIMEOUT};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], results[i].code());
            assertSame(results[i], NetResult.fromCode(expected[i]));
        }
        assertEquals("ncclRemoteError", NetResult.REMOTE_ERROR.ncclName());
        assertThrows(IllegalArgumentException.class, () -> NetResult.fromCode(9));
    }

    @Test
    void dataTypesAreNcclDataTypeTOf230() {
        assertEquals(12, DataType.values().length);
        assertEquals(0, DataType.INT8.code());
        assertEquals(6, DataType.FLOAT16.code());
        assertEquals(7, DataType.FLOAT32.code());
        assertEquals(9, DataType.BFLOAT16.code());
        assertEquals(10, DataType.FLOAT8_E4M3.code());
        assertEquals(11, DataType.FLOAT8_E5M2.code());
        assertEquals(2, DataType.BFLOAT16.size());
        assertEquals(8, DataType.UINT64.size());
        for (DataType t : DataType.values()) {
            assertSame(t, DataType.fromCode(t.code()));
            assertSame(t, DataType.fromName(t.testsName()));
            assertSame(t, DataType.fromName(t.ncclName()));
        }
        assertSame(DataType.INT32, DataType.fromName("ncclInt"));
        assertSame(DataType.FLOAT16, DataType.fromName("ncclHalf"));
        assertSame(DataType.FLOAT64, DataType.fromName("ncclDouble"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataType.fromName("quad"));
        assertTrue(e.getMessage().contains("bfloat16"), e.getMessage());
    }

    @Test
    void reduceOpsAreNcclRedOpT() {
        assertEquals(0, ReduceOp.SUM.code());
        assertEquals(1, ReduceOp.PROD.code());
        assertEquals(2, ReduceOp.MAX.code());
        assertEquals(3, ReduceOp.MIN.code());
        assertEquals(4, ReduceOp.AVG.code());
        assertSame(ReduceOp.MIN, ReduceOp.fromName("MIN"));
        assertThrows(IllegalArgumentException.class, () -> ReduceOp.fromCode(5));
    }

    @Test
    void pointerTypesAreNcclPtrBits() {
        assertEquals(1, PointerType.HOST.mask());
        assertEquals(2, PointerType.CUDA.mask());
        assertEquals(4, PointerType.DMABUF.mask());
        int mask = PointerType.maskOf(PointerType.HOST, PointerType.DMABUF);
        assertEquals(5, mask);
        assertTrue(PointerType.HOST.isIn(mask));
        assertFalse(PointerType.CUDA.isIn(mask));
        assertEquals("HOST|DMABUF", PointerType.describe(mask));
        assertEquals("HOST|0x8", PointerType.describe(9));
        assertThrows(IllegalArgumentException.class, () -> PointerType.fromCode(3));
    }

    @Test
    void apiVersionsMatchTheSpec() {
        assertEquals("ncclNetPlugin_v6", NetApiVersion.V6.netSymbol());
        assertEquals("ncclCollNetPlugin_v11", NetApiVersion.V11.collNetSymbol());
        assertEquals(48, NetApiVersion.V6.propertiesSize());
        assertEquals(128, NetApiVersion.V12.propertiesSize());
        assertEquals(17, NetApiVersion.V6.netFunctionSlots());
        assertEquals(15, NetApiVersion.V6.collNetFunctionSlots());
        assertEquals(8, NetApiVersion.V6.maxRequests());
        assertEquals(32, NetApiVersion.V7.maxRequests());
        assertSame(NetApiVersion.V6, NetPlugin.API_VERSION);
        assertThrows(IllegalArgumentException.class, () -> NetApiVersion.of(5));
    }

    @Test
    void logLevelsAndSubsystemsAreNcclDebug() {
        assertEquals(2, LogLevel.WARN.code());
        assertEquals(4, LogLevel.ABORT.code());
        assertEquals(5, LogLevel.TRACE.code());
        assertSame(LogLevel.INFO, LogLevel.parse(" info "));
        assertThrows(IllegalArgumentException.class, () -> LogLevel.parse("LOUD"));
        assertEquals(0x10, LogSubsystem.NET);
        assertEquals(0x1000, LogSubsystem.BOOTSTRAP);
        assertEquals(0x20000, LogSubsystem.ALLOC_HOST);
        assertEquals(LogSubsystem.INIT | LogSubsystem.NET, LogSubsystem.parse("INIT,net"));
        assertEquals(~LogSubsystem.PROXY, LogSubsystem.parse("^PROXY"));
        assertEquals(LogSubsystem.ALL, LogSubsystem.parse("ALL"));
        assertEquals(LogSubsystem.INIT | LogSubsystem.BOOTSTRAP | LogSubsystem.ENV, LogSubsystem.parse(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LogSubsystem.parse("INIT,NETT"));
        assertTrue(e.getMessage().contains("NETT"), e.getMessage());
    }

    @Test
    void exceptionsCarryTheirCodeAndRefuseSuccess() {
        NetException e = NetException.remoteError("peer 10.0.0.2:4000 closed the connection");
        assertSame(NetResult.REMOTE_ERROR, e.result());
        assertEquals("ncclRemoteError: peer 10.0.0.2:4000 closed the connection", e.toString());
        assertThrows(IllegalArgumentException.class, () -> new NetException(NetResult.SUCCESS, "fine"));
    }

    @Test
    void propertiesBuilderHasNcclDefaults() {
        NetProperties p = NetProperties.builder("eth0").speedMbps(25_000).maxRecvs(8).build();
        assertEquals("eth0", p.name());
        assertEquals(PointerType.HOST.mask(), p.ptrSupport());
        assertTrue(p.supports(PointerType.HOST));
        assertFalse(p.supports(PointerType.CUDA));
        assertEquals(1L << 30, p.maxP2pBytes());
        assertEquals(512L << 20, p.maxCollBytes());
        assertEquals(p, p.toBuilder().build());
        assertEquals(4, p.toBuilder().port(4).build().port());
    }
}
