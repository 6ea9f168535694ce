/**
 * How the ncclCollNet rules are checked, not API: groups of ranks on threads ({@link
 * io.jccl.tck.internal.collnet.CollKit}), element encoding for every NCCL data type and the
 * checks themselves.
 */
package io.jccl.tck.internal.collnet;
