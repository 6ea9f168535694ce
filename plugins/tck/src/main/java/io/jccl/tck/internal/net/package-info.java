/**
 * How the ncclNet rules are checked, not API: {@link io.jccl.tck.internal.net.NetKit} (the
 * transport under test with timed data-path calls and connection set-up), {@link
 * io.jccl.tck.internal.net.Exchange} and {@link io.jccl.tck.internal.net.Batch} (driving requests
 * as NCCL's proxy does), one class of checks per rule area, and the forked peer JVM's controller.
 */
package io.jccl.tck.internal.net;
