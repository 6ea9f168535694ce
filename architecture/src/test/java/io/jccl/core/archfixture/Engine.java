package io.jccl.core.archfixture;

import io.jccl.net.alpha.archfixture.AlphaTransport;

/** Breaks rule 4: core names a transport implementation. */
public final class Engine {
    public final AlphaTransport transport = new AlphaTransport();
}
