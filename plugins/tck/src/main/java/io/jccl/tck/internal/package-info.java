/**
 * The kit's machinery, not API: deadlines, bounded calls, the message pattern every transfer is
 * checked against, and the logger that keeps a transport's recent lines for failure messages.
 */
package io.jccl.tck.internal;
