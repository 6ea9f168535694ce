/**
 * The JCCL conformance test kit: numbered rules that any ncclNet or ncclCollNet transport, Java or
 * native, must pass, driven through {@code io.jccl.spi} alone.
 *
 * <p>A vendor extends {@link io.jccl.tck.NetPluginTck} (or {@link io.jccl.tck.CollNetPluginTck})
 * in its own JUnit 5 build and returns its transport from {@code createPlugin()}; {@code jccl tck}
 * runs the same classes against a transport found by name. Each rule carries a {@link
 * io.jccl.tck.TckRule}: an id such as {@code conn.3}, a {@link io.jccl.tck.RuleLevel} and an
 * "If this fails, check ..." hint. Timeouts and sizes are {@link io.jccl.tck.TckSettings}, read
 * from the {@link io.jccl.tck.TckConfig} variables.
 *
 * <p>The rules' mechanics live in {@code io.jccl.tck.internal} (not API); the forked peer JVM of
 * the process-kill rule is {@code io.jccl.tck.peer.PeerMain}.
 */
package io.jccl.tck;
