package io.jccl.spi.config;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EnvTest {
    private static final String VAR = "JCCL_ENV_TEST_VARIABLE";

    @AfterEach
    void clear() {
        System.clearProperty(VAR);
    }

    @Test
    void systemPropertyOfTheSameNameConfiguresTheVariable() {
        assertNull(Env.get(VAR));
        assertFalse(Env.isSet(VAR));
        System.setProperty(VAR, "  eth0 ");
        assertEquals("eth0", Env.get(VAR));
        System.setProperty(VAR, "   ");
        assertNull(Env.get(VAR), "blank counts as unset");
        assertEquals("dflt", Env.get(VAR, "dflt"));
    }

    @Test
    void environmentIsReadWhenNoPropertyIsSet() {
        // PATH is set in every environment this test runs in.
        assertEquals(System.getenv("PATH").trim(), Env.get("PATH"));
    }

    @Test
    void numbersFlagsAndSizesParse() {
        System.setProperty(VAR, "0x10");
        assertEquals(16, Env.getInt(VAR, 0));
        assertEquals(16L, Env.getLong(VAR, 0));
        System.setProperty(VAR, "off");
        assertFalse(Env.getBoolean(VAR, true));
        System.setProperty(VAR, "1");
        assertTrue(Env.getBoolean(VAR, false));
        System.setProperty(VAR, "512K");
        assertEquals(512L << 10, Env.getBytes(VAR, 0));
        assertEquals(4L << 20, Env.parseBytes("4M"));
        assertEquals(1L << 30, Env.parseBytes("1GiB"));
        assertEquals(8, Env.parseBytes("8"));
        assertEquals(7, Env.getInt("JCCL_ENV_TEST_UNSET", 7));
    }

    @Test
    void malformedValuesNameTheVariable() {
        System.setProperty(VAR, "lots");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Env.getInt(VAR, 1));
        assertEquals(VAR + "=lots is not an integer", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Env.getBoolean(VAR, true));
        assertThrows(IllegalArgumentException.class, () -> Env.getBytes(VAR, 1));
        assertThrows(IllegalArgumentException.class, () -> Env.parseBytes("-4K"));
    }
}
