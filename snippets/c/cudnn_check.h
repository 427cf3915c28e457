/* Error checking for programs that call cuDNN and the CUDA runtime.
 *
 * CHECK_CUDNN prints the status name (cudnnGetErrorString) and cuDNN's own explanation
 * (cudnnGetLastErrorString), then exits with 1. CHECK_CUDA does the same for the CUDA runtime.
 * require_gpu() prints one line starting with "needs a GPU:" and exits with 77 when the
 * machine has no usable CUDA device: test harnesses (automake, meson, CTest's
 * SKIP_RETURN_CODE) can count 77 as "skipped" rather than "failed".
 */
#ifndef CUDNN_CHECK_H
#define CUDNN_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime.h>
#include <cudnn.h>

#define NEEDS_GPU_EXIT 77

static inline void cudnn_fail(cudnnStatus_t status, const char *call, const char *file, int line)
{
    char last[1024];
    cudnnGetLastErrorString(last, sizeof last);
    fprintf(stderr, "%s:%d: %s failed: %s (%d)\n  cudnnGetLastErrorString: %s\n", file, line,
            call, cudnnGetErrorString(status), (int)status, last[0] ? last : "(empty)");
    exit(1);
}

static inline void cuda_fail(cudaError_t err, const char *call, const char *file, int line)
{
    fprintf(stderr, "%s:%d: %s failed: %s (%d): %s\n", file, line, call, cudaGetErrorName(err),
            (int)err, cudaGetErrorString(err));
    exit(1);
}

#define CHECK_CUDNN(call)                                                      \
    do {                                                                       \
        cudnnStatus_t status_ = (call);                                        \
        if (status_ != CUDNN_STATUS_SUCCESS)                                   \
            cudnn_fail(status_, #call, __FILE__, __LINE__);                    \
    } while (0)

#define CHECK_CUDA(call)                                                       \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess)                                               \
            cuda_fail(err_, #call, __FILE__, __LINE__);                        \
    } while (0)

/* Exit 77 with one line when there is no CUDA device; return normally otherwise. */
static inline void require_gpu(void)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        printf("needs a GPU: no CUDA device (cudaGetDeviceCount: %s)\n",
               err != cudaSuccess ? cudaGetErrorName(err) : "0 devices");
        exit(NEEDS_GPU_EXIT);
    }
}

#endif /* CUDNN_CHECK_H */
