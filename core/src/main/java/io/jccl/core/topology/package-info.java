/**
 * The machine's topology, as NCCL models it ({@code src/graph/xml.cc}, {@code topo.cc}): CPUs (NUMA
 * nodes), the PCI tree under them with each switch as one node, GPUs and NICs at its leaves.
 * {@link io.jccl.core.topology.SysfsTopology} reads it from sysfs, {@link io.jccl.core.topology.TopologyXml}
 * reads and writes NCCL's topology XML ({@code NCCL_TOPO_FILE}, {@code NCCL_TOPO_DUMP_FILE}), and
 * {@link io.jccl.core.topology.Topology} answers the questions the engine asks: how far apart two
 * devices are ({@link io.jccl.core.topology.PathType}) and which NIC a GPU or a NUMA node should use.
 */
package io.jccl.core.topology;
