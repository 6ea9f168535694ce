/** Small programs that show the engine's API; run them with {@code bin/jccl run -np N <class>}. */
package io.jccl.cli.examples;
