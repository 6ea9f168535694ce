/**
 * The {@code jccl} command ({@code bin/jccl}): one class per sub-command, each a thin front over the
 * module that does the work.
 */
package io.jccl.cli;
