package io.jccl.spi.archfixture;

import java.util.logging.Logger;

/** Breaks rule 1: java.util.logging lives in module java.logging, not java.base. */
public final class SpiUsingJavaLogging {
    public static final Logger LOG = Logger.getLogger("spi");

    private SpiUsingJavaLogging() {
    }
}
