package io.jccl.cuda;

/** What an address is to CUDA ({@code cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE)}). */
public enum PointerKind {
    /** Host memory CUDA does not know (pageable, from malloc or an arena): only the CPU reaches it. */
    HOST,
    /** Host memory allocated or registered with CUDA (pinned): the CPU and every GPU reach it. */
    PINNED_HOST,
    /** Device memory of one GPU: never dereference it from Java. */
    DEVICE,
    /** Managed (unified) memory: migrates between host and device on access. */
    MANAGED
}
