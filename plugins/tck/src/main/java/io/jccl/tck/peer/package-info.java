/**
 * The peer process of the kit's process-kill rule: a second JVM that holds the far end of
 * connections, driven over stdin and stdout, and then killed.
 */
package io.jccl.tck.peer;
