package io.jccl.net.alpha.archfixture;

import io.jccl.spi.NetHandle;

/** Obeys rules 2 and 3: depends on spi only. */
public final class AlphaTransport {
    public final NetHandle handle = NetHandle.allocate();
}
