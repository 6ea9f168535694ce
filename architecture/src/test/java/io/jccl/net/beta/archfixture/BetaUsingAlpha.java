package io.jccl.net.beta.archfixture;

import io.jccl.net.alpha.archfixture.AlphaTransport;

/** Breaks rule 3: one transport depends on another. */
public final class BetaUsingAlpha {
    public AlphaTransport alpha;
}
