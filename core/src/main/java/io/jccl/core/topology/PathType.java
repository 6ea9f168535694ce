package io.jccl.core.topology;

/**
 * How far apart two devices of one machine are, NCCL's path types in order (closest first) as
 * {@code nvidia-smi topo -m} prints them. NVLink paths are not modelled yet.
 */
public enum PathType {
    /** The same device. */
    LOC,
    /** Through at most one PCIe switch. */
    PIX,
    /** Through several PCIe switches, not through the CPU. */
    PXB,
    /** Through the CPU's PCIe host bridge. */
    PHB,
    /** Between NUMA nodes, over the CPUs' interconnect. */
    SYS
}
