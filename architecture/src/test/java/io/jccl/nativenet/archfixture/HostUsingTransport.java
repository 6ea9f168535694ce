package io.jccl.nativenet.archfixture;

import io.jccl.net.alpha.archfixture.AlphaTransport;

/** Breaks rule 6: the native host depends on a Java transport. */
public final class HostUsingTransport {
    public AlphaTransport alpha;
}
