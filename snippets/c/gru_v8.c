// snippet: timeout=120 needs=gpu
// --8<-- [start:file]
/* One GRU layer with cuDNN's v8 RNN API (the RNN API of cuDNN 9): a forward pass for inference,
 * then a training step's three calls (the forward pass in training mode,
 * cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8). Every output and every gradient is
 * compared with a plain C reference that uses the same data.
 *
 *   ./gru_v8                   # needs a CUDA GPU; says so and exits with 77 without one
 *   ./gru_v8 --cpu-reference   # prints the data and the CPU reference's results (JSON)
 *
 * cuDNN's GRU, as PyTorch's nn.GRU and Keras's GRU(reset_after=True) compute it; the reset gate
 * multiplies the recurrent product, its bias included:
 *   r = sigmoid(W_r x + bW_r + R_r h + bR_r)                 reset gate
 *   z = sigmoid(W_z x + bW_z + R_z h + bR_z)                 update gate
 *   n = tanh(W_n x + bW_n + r * (R_n h + bR_n))              new (candidate) state
 *   h' = (1 - z) * n + z * h
 * linLayerID 0-2: input weights W for r, z, n; 3-5: recurrent weights R for r, z, n; with
 * CUDNN_RNN_DOUBLE_BIAS each has its own bias. PyTorch's nn.GRU uses the same order.
 * The gradients are those of L = sum(y * dy) + sum(hT * dhy), where dy and dhy stand for the
 * gradients that flow back from the layers above (fixed values here).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudnn_check.h"

enum { T = 5, B = 3, IN = 4, H = 6, G = 3 }; /* steps, batch, input size, hidden size, gates */

/* Data: weights, input, initial state, and the gradients that flow in from above. */
static float W[G][H][IN], R[G][H][H], bW[G][H], bR[G][H];
static float x[T][B][IN], h0[B][H];
static float dy[T][B][H], dhy[B][H];

/* The CPU reference: gate values and states of the forward pass, then the gradients. */
static float act[T][B][G][H];  /* gates after their activation: r, z, n */
static float rec[T][B][H];     /* R_n h + bR_n, the product the reset gate multiplies */
static float hs[T + 1][B][H];  /* [0]: initial state, [t + 1]: after step t */
static float gx[T][B][IN], gh0[B][H];
static float gW[G][H][IN], gR[G][H][H], gbW[G][H], gbR[G][H];

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
        for (int b = 0; b < B; b++) {
            for (int i = 0; i < IN; i++) x[t][b][i] = 2.0f * value(n++, 5);
            for (int j = 0; j < H; j++) dy[t][b][j] = value(n++, 8);
        }
    for (int b = 0; b < B; b++)
        for (int j = 0; j < H; j++) {
            h0[b][j] = value(n++, 6);
            dhy[b][j] = value(n++, 9);
        }
}

static float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }

static void forward_reference(void)
{
    memcpy(hs[0], h0, sizeof h0);
    for (int t = 0; t < T; t++)
        for (int b = 0; b < B; b++)
            for (int j = 0; j < H; j++) {
                float in[G], hid[G]; /* W x + bW and R h + bR, per gate */
                for (int g = 0; g < G; g++) {
                    double si = bW[g][j], sh = bR[g][j];
                    for (int k = 0; k < IN; k++) si += (double)W[g][j][k] * x[t][b][k];
                    for (int k = 0; k < H; k++) sh += (double)R[g][j][k] * hs[t][b][k];
                    in[g] = (float)si, hid[g] = (float)sh;
                }
                float r = sigmoid(in[0] + hid[0]), z = sigmoid(in[1] + hid[1]);
                float n = tanhf(in[2] + r * hid[2]); /* the reset gate after the product */
                act[t][b][0][j] = r, act[t][b][1][j] = z, act[t][b][2][j] = n;
                rec[t][b][j] = hid[2];
                hs[t + 1][b][j] = (1.0f - z) * n + z * hs[t][b][j];
            }
}

/* Back-propagation through time, from the last step to the first. */
static void backward_reference(void)
{
    static double sW[G][H][IN], sR[G][H][H], sbW[G][H], sbR[G][H]; /* sums over steps, batch */
    float dh[B][H]; /* gradient of L with respect to h after the current step */
    memcpy(dh, dhy, sizeof dh);
    for (int t = T - 1; t >= 0; t--) {
        float di[B][G][H], dr[B][G][H]; /* gradients of W x + bW and of R h + bR, per gate */
        float carry[B][H];              /* the part of dh that reaches h_prev through z */
        for (int b = 0; b < B; b++)
            for (int j = 0; j < H; j++) {
                float r = act[t][b][0][j], z = act[t][b][1][j], n = act[t][b][2][j];
                float hp = hs[t][b][j], dhj = dy[t][b][j] + dh[b][j];
                float dn = dhj * (1.0f - z) * (1.0f - n * n); /* before the tanh */
                float dz = dhj * (hp - n) * z * (1.0f - z);   /* before the sigmoid */
                float drr = dn * rec[t][b][j] * r * (1.0f - r);
                di[b][0][j] = drr, di[b][1][j] = dz, di[b][2][j] = dn;
                dr[b][0][j] = drr, dr[b][1][j] = dz;
                dr[b][2][j] = dn * r; /* the reset gate scales the recurrent product */
                carry[b][j] = dhj * z;
            }
        for (int b = 0; b < B; b++) {
            for (int k = 0; k < IN; k++) {
                double s = 0.0;
                for (int g = 0; g < G; g++)
                    for (int j = 0; j < H; j++) s += (double)W[g][j][k] * di[b][g][j];
                gx[t][b][k] = (float)s;
            }
            for (int k = 0; k < H; k++) {
                double s = carry[b][k];
                for (int g = 0; g < G; g++)
                    for (int j = 0; j < H; j++) s += (double)R[g][j][k] * dr[b][g][j];
                dh[b][k] = (float)s;
            }
        }
        for (int g = 0; g < G; g++)
            for (int j = 0; j < H; j++)
                for (int b = 0; b < B; b++) {
                    sbW[g][j] += di[b][g][j];
                    sbR[g][j] += dr[b][g][j];
                    for (int k = 0; k < IN; k++) sW[g][j][k] += (double)di[b][g][j] * x[t][b][k];
                    for (int k = 0; k < H; k++) sR[g][j][k] += (double)dr[b][g][j] * hs[t][b][k];
                }
    }
    memcpy(gh0, dh, sizeof dh);
    for (int g = 0; g < G; g++)
        for (int j = 0; j < H; j++) {
            gbW[g][j] = (float)sbW[g][j]; /* the two biases of n differ: r scales bR_n */
            gbR[g][j] = (float)sbR[g][j];
            for (int k = 0; k < IN; k++) gW[g][j][k] = (float)sW[g][j][k];
            for (int k = 0; k < H; k++) gR[g][j][k] = (float)sR[g][j][k];
        }
}

static void print_array(const char *name, const float *a, int n, int last)
{
    printf("\"%s\": [", name);
    for (int i = 0; i < n; i++) printf("%s%.9g", i ? ", " : "", a[i]);
    printf("]%s\n", last ? "" : ",");
}

static int print_reference(void)
{
    printf("{\"T\": %d, \"B\": %d, \"IN\": %d, \"H\": %d,\n", T, B, IN, H);
    print_array("W", &W[0][0][0], G * H * IN, 0);
    print_array("R", &R[0][0][0], G * H * H, 0);
    print_array("bW", &bW[0][0], G * H, 0);
    print_array("bR", &bR[0][0], G * H, 0);
    print_array("x", &x[0][0][0], T * B * IN, 0);
    print_array("h0", &h0[0][0], B * H, 0);
    print_array("dy", &dy[0][0][0], T * B * H, 0);
    print_array("dhy", &dhy[0][0], B * H, 0);
    print_array("y", &hs[1][0][0], T * B * H, 0);
    print_array("hT", &hs[T][0][0], B * H, 0);
    print_array("dx", &gx[0][0][0], T * B * IN, 0);
    print_array("dh0", &gh0[0][0], B * H, 0);
    print_array("dW", &gW[0][0][0], G * H * IN, 0);
    print_array("dR", &gR[0][0][0], G * H * H, 0);
    print_array("dbW", &gbW[0][0], G * H, 0);
    print_array("dbR", &gbR[0][0], G * H, 1);
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
/* Where one weight matrix (or bias) lives in the weight space, as cuDNN reports it: offset from
 * the start, in floats, and row and column strides. The gradient space has the same layout. */
typedef struct { size_t base; int rowStride, colStride; } Slot;

static Slot slot(const void *space, const void *addr, cudnnTensorDescriptor_t desc,
                 int rows, int cols)
{
    cudnnDataType_t type;
    int nb = 0, dims[3], strides[3];
    CHECK_CUDNN(cudnnGetTensorNdDescriptor(desc, 3, &type, &nb, dims, strides));
    if (nb != 3 || dims[1] != rows || dims[2] != cols) {
        fprintf(stderr, "unexpected shape [%d, %d, %d], wanted [1, %d, %d]\n",
                dims[0], dims[1], dims[2], rows, cols);
        exit(1);
    }
    Slot s = {(size_t)((const char *)addr - (const char *)space) / sizeof(float),
              strides[1], strides[2]};
    return s;
}

static void put(float *image, Slot s, const float *src, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            image[s.base + (size_t)r * s.rowStride + (size_t)c * s.colStride] = src[r * cols + c];
}

static void get(const float *image, Slot s, float *dst, int rows, int cols)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            dst[r * cols + c] = image[s.base + (size_t)r * s.rowStride + (size_t)c * s.colStride];
}

int main(int argc, char **argv)
{
    make_data();
    forward_reference();
    backward_reference();
    if (argc > 1 && strcmp(argv[1], "--cpu-reference") == 0) return print_reference();
    require_gpu(); /* "needs a GPU: ..." and exit 77 without a CUDA device */

    cudnnHandle_t handle;
    CHECK_CUDNN(cudnnCreate(&handle));

    /* No dropout: an empty dropout descriptor, as PyTorch makes one. */
    cudnnDropoutDescriptor_t dropout;
    CHECK_CUDNN(cudnnCreateDropoutDescriptor(&dropout));
    CHECK_CUDNN(cudnnSetDropoutDescriptor(dropout, handle, 0.0f, NULL, 0, 0));

    /* One GRU layer in float, two biases per gate. CUDNN_FMA_MATH keeps the math in float32 (no
     * TF32 on recent GPUs), so that the gradients can be compared with a tight tolerance. */
    cudnnRNNDescriptor_t rnn;
    CHECK_CUDNN(cudnnCreateRNNDescriptor(&rnn));
    CHECK_CUDNN(cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_GRU,
                                         CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
                                         CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                         CUDNN_FMA_MATH, IN, H, H, 1, dropout,
                                         CUDNN_RNN_PADDED_IO_DISABLED));

    /* x, y and their gradients: sequence-major [T][B][vector]; h: [1][B][H]. A GRU has no cell
     * state: the calls below take NULL for c and its gradients. */
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
    cudnnTensorDescriptor_t hDesc;
    int hdims[3] = {1, B, H}, hstrides[3] = {B * H, H, 1};
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&hDesc));
    CHECK_CUDNN(cudnnSetTensorNdDescriptor(hDesc, CUDNN_DATA_FLOAT, 3, hdims, hstrides));

    /* Inference needs a workspace; training also a reserve space, which the forward pass fills
     * and the two backward calls read. One workspace, of the larger size, serves both modes. */
    size_t weightBytes = 0, inferWork = 0, unused = 0, workBytes = 0, reserveBytes = 0;
    CHECK_CUDNN(cudnnGetRNNWeightSpaceSize(handle, rnn, &weightBytes));
    CHECK_CUDNN(cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_INFERENCE, xDesc,
                                          &inferWork, &unused));
    CHECK_CUDNN(cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_TRAINING, xDesc,
                                          &workBytes, &reserveBytes));
    if (inferWork > workBytes) workBytes = inferWork;
    void *dW, *dWGrad, *dWork = NULL, *dReserve = NULL;
    void *dX, *dY, *dYInfer, *dH0, *dHT, *dHTInfer, *dDX, *dDY, *dDH0, *dDHT;
    int32_t *dLengths;
    CHECK_CUDA(cudaMalloc(&dW, weightBytes));
    CHECK_CUDA(cudaMalloc(&dWGrad, weightBytes));
    if (workBytes) CHECK_CUDA(cudaMalloc(&dWork, workBytes));
    if (reserveBytes) CHECK_CUDA(cudaMalloc(&dReserve, reserveBytes));
    CHECK_CUDA(cudaMalloc(&dX, sizeof x));
    CHECK_CUDA(cudaMalloc(&dDX, sizeof x));
    void **outputs[] = {&dY, &dYInfer, &dDY};
    for (int i = 0; i < 3; i++) CHECK_CUDA(cudaMalloc(outputs[i], sizeof dy));
    void **states[] = {&dH0, &dHT, &dHTInfer, &dDH0, &dDHT};
    for (int i = 0; i < 5; i++) CHECK_CUDA(cudaMalloc(states[i], sizeof h0));
    CHECK_CUDA(cudaMalloc((void **)&dLengths, sizeof lengths));

    /* Ask cuDNN where each matrix and bias lives, fill a host image of the weight space, copy
     * it to the GPU in one go. linLayerID 0-2: W for gates r, z, n; 3-5: R for r, z, n. */
    Slot mSlot[2 * G], bSlot[2 * G];
    float *image = calloc(weightBytes / sizeof(float), sizeof(float));
    cudnnTensorDescriptor_t mDesc, bDesc;
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&mDesc));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&bDesc));
    for (int id = 0; id < 2 * G; id++) {
        void *mAddr = NULL, *bAddr = NULL;
        int g = id % G, cols = id < G ? IN : H;
        CHECK_CUDNN(cudnnGetRNNWeightParams(handle, rnn, 0, weightBytes, dW, id,
                                            mDesc, &mAddr, bDesc, &bAddr));
        mSlot[id] = slot(dW, mAddr, mDesc, H, cols);
        bSlot[id] = slot(dW, bAddr, bDesc, H, 1);
        put(image, mSlot[id], id < G ? &W[g][0][0] : &R[g][0][0], H, cols);
        put(image, bSlot[id], id < G ? bW[g] : bR[g], H, 1);
    }
    CHECK_CUDA(cudaMemcpy(dW, image, weightBytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dX, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dH0, h0, sizeof h0, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dDY, dy, sizeof dy, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dDHT, dhy, sizeof dhy, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dLengths, lengths, sizeof lengths, cudaMemcpyHostToDevice));

    /* Forward for inference: y and the final h; no reserve space. */
    CHECK_CUDNN(cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_INFERENCE, dLengths,
                                xDesc, dX, yDesc, dYInfer, hDesc, dH0, dHTInfer,
                                hDesc, NULL, NULL, weightBytes, dW, workBytes, dWork, 0, NULL));
    /* A training step. 1. Forward in training mode: y, final h, and the reserve space. */
    CHECK_CUDNN(cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_TRAINING, dLengths,
                                xDesc, dX, yDesc, dY, hDesc, dH0, dHT, hDesc, NULL, NULL,
                                weightBytes, dW, workBytes, dWork, reserveBytes, dReserve));
    /* 2. Backward data: from dy and dhy to dx and dh0. */
    CHECK_CUDNN(cudnnRNNBackwardData_v8(handle, rnn, dLengths, yDesc, dY, dDY, xDesc, dDX,
                                        hDesc, dH0, dDHT, dDH0, hDesc, NULL, NULL, NULL,
                                        weightBytes, dW, workBytes, dWork,
                                        reserveBytes, dReserve));
    /* 3. Backward weights, after backward data: CUDNN_WGRAD_MODE_ADD adds the gradients into
     * dWGrad, so zero it first. */
    CHECK_CUDA(cudaMemset(dWGrad, 0, weightBytes));
    CHECK_CUDNN(cudnnRNNBackwardWeights_v8(handle, rnn, CUDNN_WGRAD_MODE_ADD, dLengths,
                                           xDesc, dX, hDesc, dH0, yDesc, dY,
                                           weightBytes, dWGrad, workBytes, dWork,
                                           reserveBytes, dReserve));
    CHECK_CUDA(cudaDeviceSynchronize());

    /* Bring everything back; read each weight's gradient from where its weight lives. */
    static float yInfer[T][B][H], hTInfer[B][H], y[T][B][H], hT[B][H], dx[T][B][IN], dh0[B][H];
    static float dWm[G][H][IN], dRm[G][H][H], dbW[G][H], dbR[G][H];
    CHECK_CUDA(cudaMemcpy(yInfer, dYInfer, sizeof yInfer, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hTInfer, dHTInfer, sizeof hTInfer, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(y, dY, sizeof y, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hT, dHT, sizeof hT, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(dx, dDX, sizeof dx, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(dh0, dDH0, sizeof dh0, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(image, dWGrad, weightBytes, cudaMemcpyDeviceToHost));
    for (int id = 0; id < 2 * G; id++) {
        int g = id % G;
        get(image, mSlot[id], id < G ? &dWm[g][0][0] : &dRm[g][0][0], H, id < G ? IN : H);
        get(image, bSlot[id], id < G ? dbW[g] : dbR[g], H, 1);
    }

    /* Float32 math in another order than the reference's: differences of about 1e-6. A wrong
     * gate order gives differences above 0.05. */
    const float tol = 1e-4f;
    struct { const char *name; const float *got, *want; int n; } checks[] = {
        {"y inference", &yInfer[0][0][0], &hs[1][0][0], T * B * H},
        {"hT inference", &hTInfer[0][0], &hs[T][0][0], B * H},
        {"y", &y[0][0][0], &hs[1][0][0], T * B * H},
        {"hT", &hT[0][0], &hs[T][0][0], B * H},
        {"dx", &dx[0][0][0], &gx[0][0][0], T * B * IN},
        {"dh0", &dh0[0][0], &gh0[0][0], B * H},
        {"dW", &dWm[0][0][0], &gW[0][0][0], G * H * IN},
        {"dR", &dRm[0][0][0], &gR[0][0][0], G * H * H},
        {"dbW", &dbW[0][0], &gbW[0][0], G * H},
        {"dbR", &dbR[0][0], &gbR[0][0], G * H},
    };
    printf("cuDNN %zu, GRU T=%d B=%d input=%d hidden=%d: weight space %zu bytes, "
           "workspace %zu, reserve space %zu\n", cudnnGetVersion(), T, B, IN, H, weightBytes,
           workBytes, reserveBytes);
    printf("max |cuDNN - CPU reference| (tolerance %.0e):\n", tol);
    int bad = 0;
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        float d = max_abs_diff(checks[i].got, checks[i].want, checks[i].n);
        printf("  %-12s %.2e%s\n", checks[i].name, d, d <= tol ? "" : "  MISMATCH");
        bad |= !(d <= tol);
    }
    if (bad) {
        fprintf(stderr, "MISMATCH: cuDNN's results differ from the CPU reference\n");
        return 1;
    }
    printf("OK: cuDNN matches the CPU reference (inference, training forward and gradients)\n");
    // --8<-- [end:show]

    free(image);
    cudaFree(dW); cudaFree(dWGrad); cudaFree(dWork); cudaFree(dReserve);
    cudaFree(dX); cudaFree(dDX); cudaFree(dLengths);
    for (int i = 0; i < 3; i++) cudaFree(*outputs[i]);
    for (int i = 0; i < 5; i++) cudaFree(*states[i]);
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
