/* The convolution of conv_v7.c through cuDNN's graph (backend) API, the API NVIDIA recommends
 * now: describe tensors and an operation, put it in an operation graph, let the heuristics
 * rank engine configurations, build the first execution plan that finalizes, execute it.
 * cudnn-frontend (C++ header-only, or `import cudnn` in Python) wraps exactly these calls.
 *
 *   make && ./build/conv_graph                # needs a CUDA GPU; exits 77 without one
 */
// snippet: timeout=120 needs=gpu
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "cudnn_check.h"

enum { N = 2, C = 3, HH = 7, WW = 6, K = 4, RR = 3, SS = 3, PAD = 1, STRIDE = 1 };
enum { OH = (HH + 2 * PAD - RR) / STRIDE + 1, OW = (WW + 2 * PAD - SS) / STRIDE + 1 };

static float in[N][C][HH][WW], filt[K][C][RR][SS], out[N][K][OH][OW], ref[N][K][OH][OW];

/* The same data and reference as conv_v7.c. */
static float value(int i, int salt)
{
    unsigned v = (unsigned)i * 2654435761u + (unsigned)salt * 40503u;
    return (float)((int)((v >> 8) % 17) - 8) / 8.0f;
}

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

#define SET(desc, attr, type, count, ptr) \
    CHECK_CUDNN(cudnnBackendSetAttribute(desc, attr, type, count, ptr))

// --8<-- [start:show]
/* A 4-D float tensor in NCHW layout (packed strides), identified by uid. */
static cudnnBackendDescriptor_t tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w)
{
    cudnnBackendDescriptor_t t;
    int64_t dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1}, align = 16;
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &t));
    SET(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    SET(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    SET(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    SET(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    CHECK_CUDNN(cudnnBackendFinalize(t));
    return t;
}

int main(void)
{
    int i = 0;
    for (float *p = &in[0][0][0][0]; p < &in[0][0][0][0] + N * C * HH * WW; p++) *p = value(i++, 1);
    for (float *p = &filt[0][0][0][0]; p < &filt[0][0][0][0] + K * C * RR * SS; p++) *p = value(i++, 2);
    conv_reference();
    require_gpu(); /* "needs a GPU: ..." and exit 77 without a CUDA device */

    cudnnHandle_t handle;
    CHECK_CUDNN(cudnnCreate(&handle));

    /* 1. Tensors: x, w, y, each with a unique id the variant pack refers to later. */
    enum { X_UID = 'x', W_UID = 'w', Y_UID = 'y' };
    cudnnBackendDescriptor_t x = tensor(X_UID, N, C, HH, WW);
    cudnnBackendDescriptor_t w = tensor(W_UID, K, C, RR, SS);
    cudnnBackendDescriptor_t y = tensor(Y_UID, N, K, OH, OW);

    /* 2. The convolution: cross-correlation, 2 spatial dims, float accumulation. */
    cudnnBackendDescriptor_t conv;
    int64_t spatial = 2, pad[2] = {PAD, PAD}, stride[2] = {STRIDE, STRIDE}, dil[2] = {1, 1};
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, &conv));
    SET(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
    SET(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    SET(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
    SET(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    SET(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    SET(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    CHECK_CUDNN(cudnnBackendFinalize(conv));

    /* 3. The operation y = 1 * conv(x, w) + 0 * y, and a graph holding it. */
    cudnnBackendDescriptor_t op, graph;
    float alpha = 1.0f, beta = 0.0f;
    CHECK_CUDNN(cudnnBackendCreateDescriptor(
        CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op));
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        1, &conv);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
    SET(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
    CHECK_CUDNN(cudnnBackendFinalize(op));
    CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph));
    SET(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    SET(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    CHECK_CUDNN(cudnnBackendFinalize(graph));

    /* 4. Heuristics rank engine configurations (mode A), best first. */
    cudnnBackendDescriptor_t heur, cfgs[16];
    cudnnBackendHeurMode_t heurMode = CUDNN_HEUR_MODE_A;
    int64_t nCfg = 0;
    CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur));
    SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heurMode);
    CHECK_CUDNN(cudnnBackendFinalize(heur));
    for (int c = 0; c < 16; c++)
        CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfgs[c]));
    CHECK_CUDNN(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 16, &nCfg, cfgs));

    /* 5. The first configuration that finalizes into an execution plan wins. */
    cudnnBackendDescriptor_t plan = NULL;
    int64_t chosen = -1;
    for (int64_t c = 0; c < nCfg && chosen < 0; c++) {
        CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
        SET(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
        SET(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
            &cfgs[c]);
        if (cudnnBackendFinalize(plan) == CUDNN_STATUS_SUCCESS)
            chosen = c;
        else
            CHECK_CUDNN(cudnnBackendDestroyDescriptor(plan));
    }
    if (chosen < 0) {
        fprintf(stderr, "none of the %lld engine configurations gave a plan\n", (long long)nCfg);
        return 1;
    }
    int64_t workBytes = 0, got = 0;
    CHECK_CUDNN(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                         CUDNN_TYPE_INT64, 1, &got, &workBytes));

    /* 6. Device memory, a variant pack naming it by uid, execute. */
    void *dX, *dW, *dY, *dWork = NULL;
    CHECK_CUDA(cudaMalloc(&dX, sizeof in));
    CHECK_CUDA(cudaMalloc(&dW, sizeof filt));
    CHECK_CUDA(cudaMalloc(&dY, sizeof out));
    if (workBytes > 0) CHECK_CUDA(cudaMalloc(&dWork, (size_t)workBytes));
    CHECK_CUDA(cudaMemcpy(dX, in, sizeof in, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dW, filt, sizeof filt, cudaMemcpyHostToDevice));

    cudnnBackendDescriptor_t pack;
    int64_t uids[3] = {X_UID, W_UID, Y_UID};
    void *ptrs[3] = {dX, dW, dY};
    CHECK_CUDNN(cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack));
    SET(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
    SET(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
    SET(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &dWork);
    CHECK_CUDNN(cudnnBackendFinalize(pack));
    CHECK_CUDNN(cudnnBackendExecute(handle, plan, pack));
    CHECK_CUDA(cudaMemcpy(out, dY, sizeof out, cudaMemcpyDeviceToHost));

    float worst = 0.0f;
    for (int e = 0; e < N * K * OH * OW; e++) {
        float d = fabsf((&out[0][0][0][0])[e] - (&ref[0][0][0][0])[e]);
        if (!(d <= worst)) worst = d; /* NaN counts as a mismatch */
    }
    printf("cuDNN %zu: %lld engine configurations, plan from #%lld (workspace %lld bytes)\n",
           cudnnGetVersion(), (long long)nCfg, (long long)chosen, (long long)workBytes);
    printf("max |cuDNN - CPU reference| = %.2e\n", worst);
    if (!(worst <= 1e-4f)) {
        fprintf(stderr, "MISMATCH: cuDNN graph convolution differs from the CPU reference\n");
        return 1;
    }
    printf("OK: cuDNN matches the CPU reference\n");
    // --8<-- [end:show]

    cudaFree(dX); cudaFree(dW); cudaFree(dY); cudaFree(dWork);
    cudnnBackendDescriptor_t all[] = {pack, plan, heur, graph, op, conv, x, w, y};
    for (unsigned d = 0; d < sizeof all / sizeof all[0]; d++) cudnnBackendDestroyDescriptor(all[d]);
    for (int c = 0; c < 16; c++) cudnnBackendDestroyDescriptor(cfgs[c]);
    CHECK_CUDNN(cudnnDestroy(handle));
    return 0;
}
