package io.jccl.spi;

/**
 * The versions of NCCL's plugin ABI ({@code ncclNet_vN} / {@code ncclCollNet_vN}) that JCCL knows.
 *
 * <p>The Java SPI is the v6 contract ({@link NetPlugin#API_VERSION}); the native shim exports it as
 * several of these versions and the native host adapts any of them to the SPI. Facts from
 * {@code shared/spec/ncclnet-abi.md} sections 2 and 3.
 */
public enum NetApiVersion {
    V6(6, "2.13.4", 8, 48, 17, 15),
    V7(7, "2.19.1", 32, 56, 19, 15),
    V8(8, "2.20.3", 32, 64, 19, 17),
    V9(9, "2.24.3", 32, 104, 20, 18),
    V10(10, "2.26.2", 32, 104, 20, 18),
    V11(11, "2.28.3", 32, 112, 22, 19),
    V12(12, "2.30.3", 32, 128, 22, 19);

    private final int number;
    private final String firstNcclRelease;
    private final int maxRequests;
    private final int propertiesSize;
    private final int netFunctionSlots;
    private final int collNetFunctionSlots;

    NetApiVersion(int number, String firstNcclRelease, int maxRequests, int propertiesSize,
                  int netFunctionSlots, int collNetFunctionSlots) {
        this.number = number;
        this.firstNcclRelease = firstNcclRelease;
        this.maxRequests = maxRequests;
        this.propertiesSize = propertiesSize;
        this.netFunctionSlots = netFunctionSlots;
        this.collNetFunctionSlots = collNetFunctionSlots;
    }

    /** @return N of {@code ncclNet_vN} */
    public int number() {
        return number;
    }

    /** @return the first NCCL release whose {@code ncclNet_t} is this version */
    public String firstNcclRelease() {
        return firstNcclRelease;
    }

    /** @return {@code NCCL_NET_MAX_REQUESTS} of the NCCL releases that use this version (8, later 32) */
    public int maxRequests() {
        return maxRequests;
    }

    /** @return {@code sizeof(ncclNetProperties_vN_t)} on LP64 */
    public int propertiesSize() {
        return propertiesSize;
    }

    /** @return pointer-sized slots of {@code ncclNet_vN_t}, {@code name} included */
    public int netFunctionSlots() {
        return netFunctionSlots;
    }

    /** @return pointer-sized slots of {@code ncclCollNet_vN_t}, {@code name} included */
    public int collNetFunctionSlots() {
        return collNetFunctionSlots;
    }

    /** @return the data symbol NCCL looks up, e.g. {@code ncclNetPlugin_v6} */
    public String netSymbol() {
        return "ncclNetPlugin_v" + number;
    }

    /** @return the CollNet data symbol NCCL looks up, e.g. {@code ncclCollNetPlugin_v6} */
    public String collNetSymbol() {
        return "ncclCollNetPlugin_v" + number;
    }

    /**
     * @param number N of {@code ncclNet_vN}
     * @return the matching version
     * @throws IllegalArgumentException for versions JCCL does not support (below 6 or above 12)
     */
    public static NetApiVersion of(int number) {
        for (NetApiVersion v : values()) {
            if (v.number == number) {
                return v;
            }
        }
        throw new IllegalArgumentException("ncclNet v" + number + " is not supported; JCCL knows v6 to v12");
    }

    /** @return the newest version JCCL knows */
    public static NetApiVersion newest() {
        return V12;
    }
}
