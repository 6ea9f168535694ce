package io.jccl.net.socket;

import io.jccl.spi.NetProperties;

import java.net.InetAddress;

/**
 * One interface JcclSocket uses: it listens on {@code address}.
 *
 * @param interfaceName the kernel's name, e.g. {@code eth0}
 * @param address       the address connections are made to
 * @param properties    what {@code getProperties} reports
 */
record SocketDevice(String interfaceName, InetAddress address, NetProperties properties) {
}
