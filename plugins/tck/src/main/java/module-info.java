/**
 * The JCCL conformance test kit: numbered rules for any ncclNet or ncclCollNet transport, run
 * through {@code io.jccl.spi} alone, as JUnit 5 classes a vendor extends or through
 * {@link io.jccl.tck.run.TckRunner} ({@code jccl tck}).
 */
module io.jccl.tck {
    requires transitive io.jccl.spi;
    requires transitive org.junit.jupiter.api;
    requires transitive org.junit.platform.launcher;
    requires org.junit.platform.reporting;

    exports io.jccl.tck;
    exports io.jccl.tck.run;
    exports io.jccl.tck.peer;

    // JUnit calls the rule methods (package-private) and instantiates the kit's extension.
    opens io.jccl.tck to org.junit.platform.commons;
    opens io.jccl.tck.run to org.junit.platform.commons;
}
