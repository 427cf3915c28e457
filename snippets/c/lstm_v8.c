// snippet: timeout=120 needs=gpu
// --8<-- [start:file]
/* One LSTM layer, inference forward, with cuDNN's v8 RNN API (the RNN API of cuDNN 9), checked
 * against a plain C reference that uses the same weights.
 *
 *   ./lstm_v8                   # needs a CUDA GPU; says so and exits with 77 without one
 *   ./lstm_v8 --cpu-reference   # prints inputs, weights and the CPU result (JSON)
 *
 * Gate order is cuDNN's: linLayerID 0-3 = input weights W for gates i, f, g (cell), o;
 * 4-7 = recurrent weights R for the same gates; with CUDNN_RNN_DOUBLE_BIAS each has a bias.
 * PyTorch's nn.LSTM uses the same order.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cudnn_check.h"

enum { T = 5, B = 3, IN = 4, H = 6, G = 4 }; /* steps, batch, input size, hidden size, gates */

static float W[G][H][IN], R[G][H][H], bW[G][H], bR[G][H];
static float x[T][B][IN], h0[B][H], c0[B][H];

/* Small deterministic values in [-0.5, 0.5): the same on every machine. */
static float value(int i, int salt)
{
    unsigned v = (unsigned)i * 2654435761u + (unsigned)salt * 40503u;
    return (float)((v >> 8) % 1000) / 1000.0f - 0.5f;
}

static void make_data(void)
{
    int n = 0;
    for (int g = 0; g < G; g++)
        for (int r = 0; r < H; r++) {
            for (int c = 0; c < IN; c++) W[g][r][c] = value(n++, 1);
            for (int c = 0; c < H; c++) R[g][r][c] = value(n++, 2);
            bW[g][r] = value(n++, 3);
            bR[g][r] = value(n++, 4);
        }
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            for (int i = 0; i < IN; i++) x[t][b][i] = 2.0f * value(n++, 5);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            h0[b][j] = value(n++, 6);
            c0[b][j] = value(n++, 7);
        }
}

static float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }

/* The CPU reference: y[t][b][j] for every step, and the final h and c. */
static void lstm_reference(float y[T][B][H], float hT[B][H], float cT[B][H])
{
    float h[B][H], c[B][H];
    memcpy(h, h0, sizeof h);
    memcpy(c, c0, sizeof c);
    for (int t = 0; t < T; t++) {
        float hn[B][H];
        for (int b = 0; b < B; b++)
            for (int j = 0; j < H; j++) {
                float a[G];
                for (int g = 0; g < G; g++) {
                    float s = bW[g][j] + bR[g][j];
                    for (int k = 0; k < IN; k++) s += W[g][j][k] * x[t][b][k];
                    for (int k = 0; k < H; k++) s += R[g][j][k] * h[b][k];
                    a[g] = s;
                }
                float i = sigmoid(a[0]), f = sigmoid(a[1]), gg = tanhf(a[2]), o = sigmoid(a[3]);
                c[b][j] = f * c[b][j] + i * gg;
                hn[b][j] = o * tanhf(c[b][j]);
            }
        memcpy(h, hn, sizeof h);
        memcpy(y[t], h, sizeof h);
    }
    memcpy(hT, h, sizeof h);
    memcpy(cT, c, sizeof c);
}

static void print_array(const char *name, const float *a, int n, int last)
{
    printf("\"%s\": [", name);
    for (int i = 0; i < n; i++) printf("%s%.9g", i ? ", " : "", a[i]);
    printf("]%s\n", last ? "" : ",");
}

static int print_reference(void)
{
    static float y[T][B][H], hT[B][H], cT[B][H];
    lstm_reference(y, hT, cT);
    printf("{\"T\": %d, \"B\": %d, \"IN\": %d, \"H\": %d,\n", T, B, IN, H);
    print_array("W", &W[0][0][0], G * H * IN, 0);
    print_array("R", &R[0][0][0], G * H * H, 0);
    print_array("bW", &bW[0][0], G * H, 0);
    print_array("bR", &bR[0][0], G * H, 0);
    print_array("x", &x[0][0][0], T * B * IN, 0);
    print_array("h0", &h0[0][0], B * H, 0);
    print_array("c0", &c0[0][0], B * H, 0);
    print_array("y", &y[0][0][0], T * B * H, 0);
    print_array("hT", &hT[0][0], B * H, 0);
    print_array("cT", &cT[0][0], B * H, 1);
    printf("}\n");
    return 0;
}

static float max_abs_diff(const float *a, const float *b, int n)
{
    float m = 0.0f;
    for (int i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= m)) m = d; /* NaN propagates as a failure */
    }
    return m;
}

// --8<-- [start:show]
/* Copy one weight matrix (or bias) into the host image of the weight space, at the place and
 * with the strides cuDNN reports, after checking its shape. */
static void place(float *space_host, const void *space_dev, const void *addr,
                  cudnnTensorDescriptor_t desc, const float *src, int rows, int cols)
{
    cudnnDataType_t type;
    int nb = 0, dims[3], strides[3];
    CHECK_CUDNN(cudnnGetTensorNdDescriptor(desc, 3, &type, &nb, dims, strides));
    if (nb != 3 || dims[1] != rows || dims[2] != cols) {
        fprintf(stderr, "unexpected shape [%d, %d, %d], wanted [1, %d, %d]\n",
                dims[0], dims[1], dims[2], rows, cols);
        exit(1);
    }
    size_t base = (size_t)((const char *)addr - (const char *)space_dev) / sizeof(float);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            space_host[base + (size_t)r * strides[1] + (size_t)c * strides[2]] = src[r * cols + c];
}

int main(int argc, char **argv)
{
    make_data();
    if (argc > 1 && strcmp(argv[1], "--cpu-reference") == 0) return print_reference();
    require_gpu(); /* "needs a GPU: ..." and exit 77 without a CUDA device */

    cudnnHandle_t handle;
    CHECK_CUDNN(cudnnCreate(&handle));

    /* No dropout: an empty dropout descriptor, as PyTorch makes one. */
    cudnnDropoutDescriptor_t dropout;
    CHECK_CUDNN(cudnnCreateDropoutDescriptor(&dropout));
    CHECK_CUDNN(cudnnSetDropoutDescriptor(dropout, handle, 0.0f, NULL, 0, 0));

    /* One unidirectional LSTM layer, float data and math, no projection. */
    cudnnRNNDescriptor_t rnn;
    CHECK_CUDNN(cudnnCreateRNNDescriptor(&rnn));
    CHECK_CUDNN(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM,
                                         CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
                                         CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                         CUDNN_DEFAULT_MATH, IN, H, H, 1, dropout,
                                         CUDNN_RNN_PADDED_IO_DISABLED));

    /* x and y: sequence-major [T][B][vector]; every sequence has length T. */
    int lengths[B];
    for (int b = 0; b < B; b++) lengths[b] = T;
    cudnnRNNDataDescriptor_t xDesc, yDesc;
    CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&xDesc));
    CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&yDesc));
    CHECK_CUDNN(cudnnSetRNNDataDescriptor(xDesc, CUDNN_DATA_FLOAT,
                                          CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, B, IN,
                                          lengths, NULL));
    CHECK_CUDNN(cudnnSetRNNDataDescriptor(yDesc, CUDNN_DATA_FLOAT,
                                          CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, T, B, H,
                                          lengths, NULL));
    /* h and c: [layers * directions][B][H]. */
    cudnnTensorDescriptor_t hDesc;
    int hdims[3] = {1, B, H}, hstrides[3] = {B * H, H, 1};
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&hDesc));
    CHECK_CUDNN(cudnnSetTensorNdDescriptor(hDesc, CUDNN_DATA_FLOAT, 3, hdims, hstrides));

    /* Sizes cuDNN needs, then device memory for everything. */
    size_t weightBytes = 0, workBytes = 0, reserveBytes = 0;
    CHECK_CUDNN(cudnnGetRNNWeightSpaceSize(handle, rnn, &weightBytes));
    CHECK_CUDNN(cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_INFERENCE, xDesc,
                                          &workBytes, &reserveBytes));
    void *dW, *dWork = NULL, *dX, *dY, *dH0, *dC0, *dHT, *dCT;
    int32_t *dLengths;
    CHECK_CUDA(cudaMalloc(&dW, weightBytes));
    if (workBytes) CHECK_CUDA(cudaMalloc(&dWork, workBytes));
    CHECK_CUDA(cudaMalloc(&dX, sizeof x));
    CHECK_CUDA(cudaMalloc(&dY, sizeof(float) * T * B * H));
    CHECK_CUDA(cudaMalloc(&dH0, sizeof h0));
    CHECK_CUDA(cudaMalloc(&dC0, sizeof c0));
    CHECK_CUDA(cudaMalloc(&dHT, sizeof h0));
    CHECK_CUDA(cudaMalloc(&dCT, sizeof c0));
    CHECK_CUDA(cudaMalloc((void **)&dLengths, sizeof lengths));

    /* Ask cuDNN where each matrix and bias lives in the weight space, fill a host image of
     * it, then copy it to the GPU in one go. */
    float *image = calloc(weightBytes / sizeof(float), sizeof(float));
    cudnnTensorDescriptor_t mDesc, bDesc;
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&mDesc));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&bDesc));
    for (int id = 0; id < 2 * G; id++) {
        void *mAddr = NULL, *bAddr = NULL;
        CHECK_CUDNN(cudnnGetRNNWeightParams(handle, rnn, 0, weightBytes, dW, id,
                                            mDesc, &mAddr, bDesc, &bAddr));
        int g = id % G;
        if (id < G) {
            place(image, dW, mAddr, mDesc, &W[g][0][0], H, IN);
            place(image, dW, bAddr, bDesc, bW[g], H, 1);
        } else {
            place(image, dW, mAddr, mDesc, &R[g][0][0], H, H);
            place(image, dW, bAddr, bDesc, bR[g], H, 1);
        }
    }
    CHECK_CUDA(cudaMemcpy(dW, image, weightBytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dX, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dH0, h0, sizeof h0, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dC0, c0, sizeof c0, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dLengths, lengths, sizeof lengths, cudaMemcpyHostToDevice));

    CHECK_CUDNN(cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_INFERENCE, dLengths,
                                xDesc, dX, yDesc, dY, hDesc, dH0, dHT, hDesc, dC0, dCT,
                                weightBytes, dW, workBytes, dWork, 0, NULL));
    CHECK_CUDA(cudaDeviceSynchronize());

    static float y[T][B][H], hT[B][H], cT[B][H], yRef[T][B][H], hRef[B][H], cRef[B][H];
    CHECK_CUDA(cudaMemcpy(y, dY, sizeof y, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hT, dHT, sizeof hT, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(cT, dCT, sizeof cT, cudaMemcpyDeviceToHost));
    lstm_reference(yRef, hRef, cRef);

    /* TF32 may be used for float math on recent GPUs; 2e-3 allows for it. A wrong gate order
     * or layout gives differences above 0.05. */
    const float tol = 2e-3f;
    float dy = max_abs_diff(&y[0][0][0], &yRef[0][0][0], T * B * H);
    float dh = max_abs_diff(&hT[0][0], &hRef[0][0], B * H);
    float dc = max_abs_diff(&cT[0][0], &cRef[0][0], B * H);
    printf("cuDNN %zu, LSTM T=%d B=%d input=%d hidden=%d, weight space %zu bytes, "
           "workspace %zu bytes\n", cudnnGetVersion(), T, B, IN, H, weightBytes, workBytes);
    printf("y[T-1][0] = %.6f %.6f %.6f ...\n", y[T - 1][0][0], y[T - 1][0][1], y[T - 1][0][2]);
    printf("max |cuDNN - CPU reference|: y %.2e, h %.2e, c %.2e (tolerance %.0e)\n",
           dy, dh, dc, tol);
    if (!(dy <= tol && dh <= tol && dc <= tol)) {
        fprintf(stderr, "MISMATCH: cuDNN LSTM differs from the CPU reference\n");
        return 1;
    }
    printf("OK: cuDNN matches the CPU reference\n");
    // --8<-- [end:show]

    free(image);
    cudaFree(dW); cudaFree(dWork); cudaFree(dX); cudaFree(dY);
    cudaFree(dH0); cudaFree(dC0); cudaFree(dHT); cudaFree(dCT); cudaFree(dLengths);
    cudnnDestroyTensorDescriptor(mDesc);
    cudnnDestroyTensorDescriptor(bDesc);
    cudnnDestroyTensorDescriptor(hDesc);
    cudnnDestroyRNNDataDescriptor(xDesc);
    cudnnDestroyRNNDataDescriptor(yDesc);
    cudnnDestroyRNNDescriptor(rnn);
    cudnnDestroyDropoutDescriptor(dropout);
    CHECK_CUDNN(cudnnDestroy(handle));
    return 0;
}
// --8<-- [end:file]
