package io.jccl.tck.archfixture;

import io.jccl.core.archfixture.Engine;

/** Breaks rule 5: the conformance kit depends on core. */
public final class RuleUsingCore {
    public Engine engine;
}
