/* A 2-D convolution forward with cuDNN 9's legacy API, done completely: descriptors, output
 * size, algorithm choice with cudnnGetConvolutionForwardAlgorithm_v7, workspace, device memory,
 * cudnnConvolutionForward, and the result checked against a CPU reference.
 *
 *   make && ./build/conv_v7                   # needs a CUDA GPU; exits 77 without one
 *   ./build/conv_v7 --cpu-reference           # prints input, filter and the CPU result (JSON)
 *
 * The legacy convolution API is marked deprecated in cuDNN 9 but still exported; see
 * conv_graph.c for the same convolution through the graph API.
 */
// snippet: timeout=120 needs=gpu
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cudnn_check.h"

/* NCHW input, KCRS filter, padding 1, stride 1, no dilation: output has the input's H and W. */
enum { N = 2, C = 3, HH = 7, WW = 6, K = 4, RR = 3, SS = 3, PAD = 1, STRIDE = 1 };
enum { OH = (HH + 2 * PAD - RR) / STRIDE + 1, OW = (WW + 2 * PAD - SS) / STRIDE + 1 };

static float in[N][C][HH][WW], filt[K][C][RR][SS], out[N][K][OH][OW], ref[N][K][OH][OW];

/* Multiples of 1/8 between -1 and 1: exact in float and in TF32, so every product is exact. */
static float value(int i, int salt)
{
    unsigned v = (unsigned)i * 2654435761u + (unsigned)salt * 40503u;
    return (float)((int)((v >> 8) % 17) - 8) / 8.0f;
}

/* Cross-correlation, what cuDNN and every framework call "convolution". */
static void conv_reference(void)
{
    for (int n = 0; n < N; n++)
        for (int k = 0; k < K; k++)
            for (int p = 0; p < OH; p++)
                for (int q = 0; q < OW; q++) {
                    double s = 0.0;
                    for (int c = 0; c < C; c++)
                        for (int r = 0; r < RR; r++)
                            for (int t = 0; t < SS; t++) {
                                int h = p * STRIDE - PAD + r, w = q * STRIDE - PAD + t;
                                if (h >= 0 && h < HH && w >= 0 && w < WW)
                                    s += (double)in[n][c][h][w] * filt[k][c][r][t];
                            }
                    ref[n][k][p][q] = (float)s;
                }
}

static void print_array(const char *name, const float *a, int n, int last)
{
    printf("\"%s\": [", name);
    for (int i = 0; i < n; i++) printf("%s%.9g", i ? ", " : "", a[i]);
    printf("]%s\n", last ? "" : ",");
}

static const char *algo_name(cudnnConvolutionFwdAlgo_t a)
{
    static const char *names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                  "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "?";
}

int main(int argc, char **argv)
{
    int i = 0;
    for (float *p = &in[0][0][0][0]; p < &in[0][0][0][0] + N * C * HH * WW; p++) *p = value(i++, 1);
    for (float *p = &filt[0][0][0][0]; p < &filt[0][0][0][0] + K * C * RR * SS; p++) *p = value(i++, 2);
    conv_reference();
    if (argc > 1 && strcmp(argv[1], "--cpu-reference") == 0) {
        printf("{\"shape\": [%d, %d, %d, %d, %d, %d, %d, %d, %d],\n", N, C, HH, WW, K, RR, SS,
               PAD, STRIDE);
        print_array("x", &in[0][0][0][0], N * C * HH * WW, 0);
        print_array("w", &filt[0][0][0][0], K * C * RR * SS, 0);
        print_array("y", &ref[0][0][0][0], N * K * OH * OW, 1);
        printf("}\n");
        return 0;
    }
    require_gpu(); /* "needs a GPU: ..." and exit 77 without a CUDA device */

    // --8<-- [start:show]
    cudnnHandle_t handle;
    CHECK_CUDNN(cudnnCreate(&handle));

    cudnnTensorDescriptor_t xDesc, yDesc;
    cudnnFilterDescriptor_t wDesc;
    cudnnConvolutionDescriptor_t conv;
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&xDesc));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&yDesc));
    CHECK_CUDNN(cudnnCreateFilterDescriptor(&wDesc));
    CHECK_CUDNN(cudnnCreateConvolutionDescriptor(&conv));
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(xDesc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                           N, C, HH, WW));
    CHECK_CUDNN(cudnnSetFilter4dDescriptor(wDesc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                           K, C, RR, SS));
    CHECK_CUDNN(cudnnSetConvolution2dDescriptor(conv, PAD, PAD, STRIDE, STRIDE, 1, 1,
                                                CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));

    /* Ask cuDNN for the output size instead of assuming it, and check it. */
    int on, oc, oh, ow;
    CHECK_CUDNN(cudnnGetConvolution2dForwardOutputDim(conv, xDesc, wDesc, &on, &oc, &oh, &ow));
    if (on != N || oc != K || oh != OH || ow != OW) {
        fprintf(stderr, "output %dx%dx%dx%d, expected %dx%dx%dx%d\n", on, oc, oh, ow,
                N, K, OH, OW);
        return 1;
    }
    CHECK_CUDNN(cudnnSetTensor4dDescriptor(yDesc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                           on, oc, oh, ow));

    /* cudnnGetConvolutionForwardAlgorithm and CUDNN_CONVOLUTION_FWD_PREFER_FASTEST were
     * removed in cuDNN 8. The _v7 call returns every algorithm ranked by cuDNN's heuristics;
     * take the first that is supported. (cudnnFindConvolutionForwardAlgorithm times them.) */
    int maxAlgos = 0, returned = 0;
    CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithmMaxCount(handle, &maxAlgos));
    cudnnConvolutionFwdAlgoPerf_t perf[16];
    if (maxAlgos > 16) maxAlgos = 16;
    CHECK_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(handle, xDesc, wDesc, conv, yDesc,
                                                       maxAlgos, &returned, perf));
    int chosen = -1;
    for (int a = 0; a < returned && chosen < 0; a++)
        if (perf[a].status == CUDNN_STATUS_SUCCESS) chosen = a;
    if (chosen < 0) {
        fprintf(stderr, "no supported forward algorithm among %d\n", returned);
        return 1;
    }
    cudnnConvolutionFwdAlgo_t algo = perf[chosen].algo;
    CHECK_CUDNN(cudnnSetConvolutionMathType(conv, perf[chosen].mathType));

    size_t workBytes = 0;
    CHECK_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(handle, xDesc, wDesc, conv, yDesc,
                                                        algo, &workBytes));
    void *dX, *dW, *dY, *dWork = NULL;
    CHECK_CUDA(cudaMalloc(&dX, sizeof in));
    CHECK_CUDA(cudaMalloc(&dW, sizeof filt));
    CHECK_CUDA(cudaMalloc(&dY, sizeof out));
    if (workBytes) CHECK_CUDA(cudaMalloc(&dWork, workBytes));
    CHECK_CUDA(cudaMemcpy(dX, in, sizeof in, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dW, filt, sizeof filt, cudaMemcpyHostToDevice));

    const float alpha = 1.0f, beta = 0.0f; /* y = alpha * conv(x, w) + beta * y */
    CHECK_CUDNN(cudnnConvolutionForward(handle, &alpha, xDesc, dX, wDesc, dW, conv, algo,
                                        dWork, workBytes, &beta, yDesc, dY));
    CHECK_CUDA(cudaMemcpy(out, dY, sizeof out, cudaMemcpyDeviceToHost));

    float worst = 0.0f;
    for (int e = 0; e < N * K * OH * OW; e++) {
        float d = fabsf((&out[0][0][0][0])[e] - (&ref[0][0][0][0])[e]);
        if (!(d <= worst)) worst = d; /* NaN counts as a mismatch */
    }
    printf("cuDNN %zu: %d algorithms ranked, using %s (workspace %zu bytes)\n",
           cudnnGetVersion(), returned, algo_name(algo), workBytes);
    printf("output %dx%dx%dx%d, max |cuDNN - CPU reference| = %.2e\n", on, oc, oh, ow, worst);
    if (!(worst <= 1e-4f)) {
        fprintf(stderr, "MISMATCH: cuDNN convolution differs from the CPU reference\n");
        return 1;
    }
    printf("OK: cuDNN matches the CPU reference\n");
    // --8<-- [end:show]

    cudaFree(dX); cudaFree(dW); cudaFree(dY); cudaFree(dWork);
    cudnnDestroyTensorDescriptor(xDesc);
    cudnnDestroyTensorDescriptor(yDesc);
    cudnnDestroyFilterDescriptor(wDesc);
    cudnnDestroyConvolutionDescriptor(conv);
    CHECK_CUDNN(cudnnDestroy(handle));
    return 0;
}
