/**
 * The Java half of the native shim {@code libnccl-net.so}, which lets real NCCL run a Java
 * transport.
 *
 * <p>The C half ({@code src/main/c}) exports {@code ncclNetPlugin_v6..v12} and
 * {@code ncclCollNetPlugin_v6..v12}. On NCCL's first {@code init} it joins the JVM running in the
 * process or starts one, and calls {@link io.jccl.shim.ShimBridge#bootstrap} through JNI, which
 * fills the C half's operation tables with FFM upcall stubs bound to {@code NetBridge} and
 * {@code CollNetBridge}. Each NCCL call then goes: NCCL &rarr; the C adapter of its ABI version
 * (argument widths, property layouts) &rarr; one upcall &rarr; the bridge, which finds the Java comm,
 * registration and request by index ({@code HandleTable}, {@code BridgedComm}) &rarr; the transport.
 * {@link io.jccl.shim.ShimConfig} lists the variables; {@code RuntimeModules} checks that the Java
 * runtime has the modules the shim and the chosen transport need.
 */
package io.jccl.shim;
