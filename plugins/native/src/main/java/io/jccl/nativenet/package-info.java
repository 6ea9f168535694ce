/**
 * The native-plugin host: any ncclNet / ncclCollNet plugin library ({@code .so}) as a Java
 * {@link io.jccl.spi.NetPlugin} or {@link io.jccl.spi.CollNetPlugin}, through FFM.
 *
 * <p>{@link io.jccl.nativenet.NativePluginLibrary} opens a library by NCCL's rules and takes the
 * newest symbol version it exports (v6 to v12); {@link io.jccl.nativenet.NativeNetPlugin} and
 * {@link io.jccl.nativenet.NativeCollNetPlugin} adapt that version's function table and struct
 * layouts to the SPI; {@link io.jccl.nativenet.NativePluginSource} makes the libraries of
 * {@code NCCL_NET_PLUGIN} part of transport discovery. The printf-style logger that plugins call
 * is a few lines of C ({@code libjccl-nativehost.so}, built with this module).
 */
package io.jccl.nativenet;
