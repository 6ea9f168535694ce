/**
 * Running the kit outside a build: {@link io.jccl.tck.run.TckRunner} launches kit classes through
 * the JUnit Platform, collects one {@link io.jccl.tck.run.RuleOutcome} per rule and writes JUnit
 * XML and a Markdown report; {@link io.jccl.tck.run.DiscoveredNetPluginTck} and
 * {@link io.jccl.tck.run.DiscoveredCollNetPluginTck} check the transport named by a configuration
 * parameter. {@code jccl tck} is a thin front over this package.
 */
package io.jccl.tck.run;
