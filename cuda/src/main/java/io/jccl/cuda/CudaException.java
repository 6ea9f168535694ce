package io.jccl.cuda;

/**
 * A CUDA driver call failed: carries its {@code CUresult}, the driver's name for it (e.g.
 * {@code CUDA_ERROR_OUT_OF_MEMORY}) and what JCCL was doing.
 */
public final class CudaException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int result;
    private final String resultName;

    CudaException(String call, int result, String resultName, String resultText) {
        super(call + " failed: " + resultName + " (" + result + "): " + resultText);
        this.result = result;
        this.resultName = resultName;
    }

    /** @return the {@code CUresult} code */
    public int result() {
        return result;
    }

    /** @return the driver's name of the code, e.g. {@code CUDA_ERROR_INVALID_VALUE} */
    public String resultName() {
        return resultName;
    }
}
