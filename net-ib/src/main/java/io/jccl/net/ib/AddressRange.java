package io.jccl.net.ib;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * A CIDR range such as {@code 10.0.0.0/8} or {@code fd00::/8} ({@code NCCL_IB_ADDR_RANGE}). An IPv4
 * range matches IPv4 addresses, an IPv6 range IPv6 ones.
 */
public final class AddressRange {
    private final byte[] network;
    private final int prefix;
    private final String text;

    private AddressRange(byte[] network, int prefix, String text) {
        this.network = network;
        this.prefix = prefix;
        this.text = text;
    }

    /**
     * @param variable the variable being parsed, for the error message
     * @param text     {@code address/prefix}
     * @throws IllegalArgumentException naming the variable if the text is not a CIDR range
     */
    public static AddressRange parse(String variable, String text) {
        int slash = text.indexOf('/');
        try {
            if (slash < 0) {
                throw new IllegalArgumentException("no /prefix");
            }
            String host = text.substring(0, slash).trim();
            if (!host.matches("[0-9a-fA-F:.]+")) {
                throw new IllegalArgumentException("not an IP address: " + host);
            }
            byte[] net = InetAddress.getByName(host).getAddress();
            int prefix = Integer.parseInt(text.substring(slash + 1).trim());
            if (prefix < 0 || prefix > net.length * 8) {
                throw new IllegalArgumentException("prefix " + prefix + " out of range");
            }
            return new AddressRange(net, prefix, text.trim());
        } catch (UnknownHostException | RuntimeException e) {
            throw new IllegalArgumentException(variable + "=" + text + " is not a CIDR range such as 10.0.0.0/8 ("
                    + e.getMessage() + ")", e);
        }
    }

    /** @return whether {@code address} (4 or 16 bytes) lies in the range */
    public boolean contains(byte[] address) {
        if (address.length != network.length) {
            return false;
        }
        int full = prefix / 8;
        for (int i = 0; i < full; i++) {
            if (address[i] != network[i]) {
                return false;
            }
        }
        int rest = prefix % 8;
        if (rest == 0) {
            return true;
        }
        int mask = (0xff << (8 - rest)) & 0xff;
        return (address[full] & mask) == (network[full] & mask);
    }

    @Override
    public String toString() {
        return text;
    }
}
