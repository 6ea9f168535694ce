package io.jccl.net.alpha.archfixture;

import io.jccl.core.archfixture.Engine;

/** Breaks rule 2: a transport depends on core. */
public final class AlphaUsingCore {
    public Engine engine;
}
