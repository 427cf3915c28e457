// snippet: timeout=120
// --8<-- [start:file]
/* Which cuDNN and CUDA runtime this program was built against and runs with, then cudnnCreate.
 * Runs with or without a GPU: without one, cudnnCreate fails and the program says why.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cudnn_check.h"

// --8<-- [start:show]
int main(void)
{
    /* Compile time (cudnn.h) against run time (libcudnn.so.9). Since cuDNN 9,
     * CUDNN_VERSION = MAJOR*10000 + MINOR*100 + PATCH (cuDNN 8 used MAJOR*1000). */
    size_t runtime = cudnnGetVersion();
    printf("cuDNN   header %d.%d.%d (CUDNN_VERSION %d), library %zu\n", CUDNN_MAJOR,
           CUDNN_MINOR, CUDNN_PATCHLEVEL, CUDNN_VERSION, runtime);
    int major = 0, minor = 0, patch = 0;
    CHECK_CUDNN(cudnnGetProperty(MAJOR_VERSION, &major));
    CHECK_CUDNN(cudnnGetProperty(MINOR_VERSION, &minor));
    CHECK_CUDNN(cudnnGetProperty(PATCH_LEVEL, &patch));
    printf("cuDNN   library properties %d.%d.%d\n", major, minor, patch);
    if (major != CUDNN_MAJOR) {
        fprintf(stderr, "header major %d but library major %d: rebuild\n", CUDNN_MAJOR, major);
        return 1;
    }

    int rt = 0, driver = 0;
    CHECK_CUDA(cudaRuntimeGetVersion(&rt));
    cudaDriverGetVersion(&driver); /* 0 when no NVIDIA driver is installed */
    printf("CUDA    cuDNN built with runtime %zu, runtime loaded %d, driver %d\n",
           cudnnGetCudartVersion(), rt, driver);

    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    printf("devices cudaGetDeviceCount: %s, count %d\n",
           err == cudaSuccess ? "cudaSuccess" : cudaGetErrorName(err), devices);

    cudnnHandle_t handle;
    cudnnStatus_t status = cudnnCreate(&handle);
    if (status != CUDNN_STATUS_SUCCESS) {
        char why[512];
        cudnnGetLastErrorString(why, sizeof why);
        printf("cudnnCreate: %s (%d)\n", cudnnGetErrorString(status), (int)status);
        printf("  cudnnGetLastErrorString: %s\n", why);
        /* Without a GPU this is the expected result; with one it is a real failure. */
        return (err != cudaSuccess || devices == 0) ? 0 : 1;
    }
    printf("cudnnCreate: CUDNN_STATUS_SUCCESS\n");
    CHECK_CUDNN(cudnnDestroy(handle));
    return 0;
}
// --8<-- [end:show]
// --8<-- [end:file]
