package io.jccl.spi.archfixture;

import java.lang.foreign.MemorySegment;
import java.util.List;

/** Obeys rule 1: java.base only. */
public record CleanSpiType(MemorySegment data, List<String> names) {
}
