package io.jccl.bench;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Collections;

/** The address benchmarks connect over: the first IPv4 address of an up, non-loopback interface, else loopback. */
final class LocalAddress {
    private LocalAddress() {
    }

    static InetAddress pick() {
        try {
            for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                if (nif.isUp() && !nif.isLoopback()) {
                    for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                        if (a instanceof Inet4Address) {
                            return a;
                        }
                    }
                }
            }
        } catch (SocketException e) {
            // Fall through to loopback.
        }
        return InetAddress.getLoopbackAddress();
    }
}
