// snippet: timeout=600 needs=gpu exclusive
// --8<-- [start:file]
/* How close to this GPU's limits cuDNN itself runs one LSTM or GRU layer, measured from C with
 * cuDNN's RNN API: every RNN algorithm and every math and data type, for inference and for a
 * training step, over the hidden sizes and batches readers use; beside the floors and ceilings
 * of the same GPU, measured in the same run.
 *
 *   ./rnn_limits                     # needs a CUDA GPU; says so and exits with 77 without one
 *   ./rnn_limits --help              # sizes, algorithms, types, time budget
 *   ./rnn_limits --cpu-reference lstm 6 3 5 fp32    # the CPU reference's data and results (JSON)
 *   BENCH_CPU_DRY_RUN=1 ./rnn_limits # on the CPU: plan, budget, checks of the libraries it opens
 *                                    # and the result files, with pretended timings
 *
 * Each configuration is a cell (LSTM or GRU), an algorithm (CUDNN_RNN_ALGO_STANDARD,
 * PERSIST_STATIC, PERSIST_STATIC_SMALL_H, PERSIST_DYNAMIC), a type and a size (hidden H, batch
 * B; input size = H, one layer, unidirectional, 64 steps). The types are what PyTorch passes to
 * cudnnSetRNNDescriptor_v8 (aten/src/ATen/cudnn/Descriptors.h and native/cudnn/RNN.cpp):
 *   FP32  float data and math, CUDNN_FMA_MATH: no Tensor Cores (torch.backends.cudnn.allow_tf32
 *         off; the setting of the site's other benchmarks)
 *   TF32  float data and math, CUDNN_DEFAULT_MATH: cuDNN may use TF32 Tensor Cores (PyTorch's
 *         default)
 *   FP16  half data, float math precision, CUDNN_TENSOR_OP_MATH (PyTorch in half / autocast)
 *   BF16  bfloat16 data, float math precision, CUDNN_DEFAULT_MATH (PyTorch in bfloat16)
 * A configuration cuDNN refuses (cudnnSetRNNDescriptor_v8, cudnnBuildRNNDynamic,
 * cudnnRNNForward, ... return a status) is a result: the call and the status are recorded.
 *
 * Before it is timed, each configuration runs 8 steps at its own hidden size and batch, and
 * batch rows 0 and B-1 of its outputs (and, for training, every gradient) are compared with a
 * plain C reference in double precision fed the same values rounded to the type. The error is
 * max |cuDNN - reference| / max |reference| per array; the tolerances are 1e-4 for FP32 (FMA),
 * 1e-2 for TF32 and FP16, 4e-2 for BF16 (a wrong gate order or layout gives above 0.2). A
 * mismatch is printed at once, the configuration is not timed, and the program exits with 1
 * after writing its files; in a GPU run with a time budget (BENCH_DEADLINE set) it exits 0, so
 * that the run keeps every measurement with the mismatch among them (status "mismatch"), and
 * the GPU test that reads the run's record fails on it.
 *
 * Timing is on the device: CUDA events around back-to-back calls on one stream. Each
 * configuration is warmed up for a time (30 ms), then timed in 7 samples of at least 5 ms each
 * (as many calls as fill it); per step = per call / steps. The host's time to issue the calls is
 * recorded too: where it is as long as the device's, the host's launches set the pace. FLOPs
 * (multiply-adds count 2; the gates' element-wise work is left out):
 *     forward (inference)  2 * G * B * T * H * (I + H)     G = 4 gates (LSTM) or 3 (GRU)
 *     training step        3 * that (forward, then the gradients of inputs and of weights)
 *
 * The floors and ceilings of the GPU, measured first: an empty kernel's launch (back to back,
 * and launch plus synchronise), a grid-wide barrier (one block per SM, the persistent kernels'
 * per-step floor), both compiled with NVRTC and launched with the CUDA driver API; cuBLAS's
 * cublasGemmEx for one step's recurrent GEMM (B x H times H x G*H) at every size timed, and for
 * 8192^3, in FP32, TF32, FP16 and BF16. cuBLAS, NVRTC and the driver library are opened at run
 * time (dlopen), so the program builds and links against cuDNN and the CUDA runtime alone; a
 * part whose library is missing is recorded as such, never guessed.
 *
 * Time budget: BENCH_DEADLINE (Unix time, set by a GPU run with a budget), else --seconds
 * (default 420). Sizes are measured whole (every cell, algorithm, type and mode of one size), in
 * this order: the centre (H 256, B 64), the other hidden sizes at that batch, the other batches
 * at that hidden size, then the rest, cheapest (B * H^2) first. A size whose estimated time does
 * not fit what is left is left out whole, and listed. Results go to $SNIPPET_DATA_DIR (the
 * current folder when unset), rewritten as each size ends, so a run cut short keeps what
 * finished: rnn_limits.json (every cell, the floors, the plan) and rnn_limits_floors.json.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include <cuda.h> /* the driver API's types: libcuda itself is opened at run time */

#include "cudnn_check.h"

/* ---------------------------------------------------------------------------------------- */
/* What is measured                                                                          */
/* ---------------------------------------------------------------------------------------- */

enum { LSTM, GRU, NCELLS };
enum { INFERENCE, TRAINING, NMODES };
enum { STANDARD, PERSIST_STATIC, PERSIST_STATIC_SMALL_H, PERSIST_DYNAMIC, NALGOS };
enum { FP32, TF32, FP16, BF16, NTYPES };
enum { ROUND_FLOAT, ROUND_HALF, ROUND_BF16 }; /* how a type stores a value */

static const struct { const char *name; cudnnRNNMode_t mode; int gates; } CELLS[NCELLS] = {
    {"LSTM", CUDNN_LSTM, 4}, {"GRU", CUDNN_GRU, 3}};
static const char *const MODES[NMODES] = {"inference", "training"};
static const struct { const char *name; cudnnRNNAlgo_t algo; } ALGOS[NALGOS] = {
    {"STANDARD", CUDNN_RNN_ALGO_STANDARD},
    {"PERSIST_STATIC", CUDNN_RNN_ALGO_PERSIST_STATIC},
    {"PERSIST_STATIC_SMALL_H", CUDNN_RNN_ALGO_PERSIST_STATIC_SMALL_H},
    {"PERSIST_DYNAMIC", CUDNN_RNN_ALGO_PERSIST_DYNAMIC}};

/* cuBLAS's constants (cublas_api.h; the tests check them against the header). */
enum { RL_CUBLAS_OP_N = 0, RL_CUBLAS_GEMM_DEFAULT = -1 };
enum { RL_CUBLAS_COMPUTE_32F = 68, RL_CUBLAS_COMPUTE_32F_FAST_TF32 = 77 };

typedef struct {
    const char *name;
    cudnnDataType_t data, prec;
    cudnnMathType_t math;
    const char *data_name, *prec_name, *math_name;
    int bytes, rounding;
    double tol;
    cudaDataType gemm_type;  /* cublasGemmEx: A, B and C */
    unsigned gemm_compute;   /* cublasComputeType_t */
    const char *gemm_compute_name;
} TypeInfo;

static const TypeInfo TYPES[NTYPES] = {
    {"FP32", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, "CUDNN_DATA_FLOAT",
     "CUDNN_DATA_FLOAT", "CUDNN_FMA_MATH", 4, ROUND_FLOAT, 1e-4, CUDA_R_32F,
     RL_CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F"},
    {"TF32", CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, "CUDNN_DATA_FLOAT",
     "CUDNN_DATA_FLOAT", "CUDNN_DEFAULT_MATH", 4, ROUND_FLOAT, 1e-2, CUDA_R_32F,
     RL_CUBLAS_COMPUTE_32F_FAST_TF32, "CUBLAS_COMPUTE_32F_FAST_TF32"},
    {"FP16", CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, "CUDNN_DATA_HALF",
     "CUDNN_DATA_FLOAT", "CUDNN_TENSOR_OP_MATH", 2, ROUND_HALF, 1e-2, CUDA_R_16F,
     RL_CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F"},
    {"BF16", CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_DEFAULT_MATH, "CUDNN_DATA_BFLOAT16",
     "CUDNN_DATA_FLOAT", "CUDNN_DEFAULT_MATH", 2, ROUND_BF16, 4e-2, CUDA_R_16BF,
     RL_CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F"},
};

enum { MAX_SIZES = 8, MAX_SAMPLES = 16, LARGE_GEMM = 8192 };

typedef struct {
    int steps, check_steps;
    int hidden[MAX_SIZES], nh, batch[MAX_SIZES], nb;
    unsigned cells, algos, types, modes; /* bit masks */
    int floors;
    double seconds, warmup_s, sample_s;
    int samples;
    int dry_run, stop_after_blocks;
} Options;

static Options opt = {
    .steps = 64, .check_steps = 8,
    .hidden = {128, 256, 512, 1024}, .nh = 4, .batch = {32, 64, 128, 256}, .nb = 4,
    .cells = 3, .algos = 15, .types = 15, .modes = 3, .floors = 1,
    .seconds = 420, .warmup_s = 0.030, .sample_s = 0.005, .samples = 7,
};

/* ---------------------------------------------------------------------------------------- */
/* Statistics, clocks, JSON                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Median, quartiles (Python's statistics.quantiles(n=4, method="inclusive")) and extremes. */
typedef struct { int n; double v[MAX_SAMPLES], median, q1, q3, min, max; } Spread;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void summarise(Spread *s)
{
    double d[MAX_SAMPLES];
    int n = s->n, m = n - 1;
    memcpy(d, s->v, sizeof(double) * (size_t)n);
    qsort(d, (size_t)n, sizeof(double), by_value);
    s->min = d[0], s->max = d[m];
    s->median = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
    if (n == 1) { s->q1 = s->q3 = d[0]; return; }
    int j = m / 4, delta = m % 4;
    s->q1 = (d[j] * (4 - delta) + d[j + 1] * delta) / 4;
    j = 3 * m / 4, delta = 3 * m % 4;
    s->q3 = (d[j] * (4 - delta) + d[j + 1] * delta) / 4;
}

static double real_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The dry run has no GPU to wait for: its clock moves by the time each step would take. */
static double virtual_start = 0, virtual_elapsed = 0;
static double now(void) { return opt.dry_run ? virtual_start + virtual_elapsed : real_now(); }

/* A string into a buffer of n bytes, cut short if it must be. */
static void copy(char *dst, size_t n, const char *src)
{
    size_t k = strlen(src);
    if (k >= n) k = n - 1;
    memcpy(dst, src, k);
    dst[k] = 0;
}

typedef struct { char *p; size_t n, cap; } Buf;

static void put(Buf *b, const char *fmt, ...)
{
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)need + 1 > b->cap) {
        b->cap = 2 * (b->n + (size_t)need + 1);
        b->p = realloc(b->p, b->cap);
        if (!b->p) { perror("realloc"); exit(1); }
    }
    vsnprintf(b->p + b->n, (size_t)need + 1, fmt, again);
    va_end(again);
    b->n += (size_t)need;
}

static void put_str(Buf *b, const char *s)
{
    put(b, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put(b, "\\%c", c);
        else if (c < 0x20) put(b, " "); /* cuDNN's messages may hold line breaks */
        else put(b, "%c", c);
    }
    put(b, "\"");
}

static void put_num(Buf *b, double v)
{
    if (isfinite(v)) put(b, "%.6g", v);
    else put(b, "null");
}

static void put_spread(Buf *b, const Spread *s)
{
    put(b, "{\"median\": "), put_num(b, s->median);
    put(b, ", \"q1\": "), put_num(b, s->q1);
    put(b, ", \"q3\": "), put_num(b, s->q3);
    put(b, ", \"min\": "), put_num(b, s->min);
    put(b, ", \"max\": "), put_num(b, s->max);
    put(b, ", \"samples\": [");
    for (int i = 0; i < s->n; i++) put(b, i ? ", " : ""), put_num(b, s->v[i]);
    put(b, "]}");
}

/* The result folder, made if missing, and a file written so that a reader never sees half of it. */
static const char *data_dir(void)
{
    const char *dir = getenv("SNIPPET_DATA_DIR");
    return dir && *dir ? dir : ".";
}

static void write_file(const char *name, const Buf *b)
{
    char path[4096], tmp[4200], part[4096];
    copy(part, sizeof part, data_dir());
    for (char *p = part + 1; *p; p++)
        if (*p == '/') { *p = 0; mkdir(part, 0777); *p = '/'; }
    if (mkdir(part, 0777) != 0 && errno != EEXIST) { perror(part); exit(1); }
    snprintf(path, sizeof path, "%s/%s", data_dir(), name);
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", data_dir(), name);
    FILE *f = fopen(tmp, "w");
    if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f) != 0 || rename(tmp, path) != 0) {
        perror(path);
        exit(1);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* Half and bfloat16 on the host, rounding to nearest even                                  */
/* ---------------------------------------------------------------------------------------- */

static uint16_t to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000, mant = x & 0x7fffff;
    int exp = (int)((x >> 23) & 0xff), e = exp - 127 + 15;
    if (exp == 255) return (uint16_t)(sign | 0x7c00 | (mant ? 0x200 : 0));
    if (e >= 31) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) { /* a subnormal half, or zero */
        if (e < -10) return (uint16_t)sign;
        mant |= 0x800000;
        int shift = 14 - e;
        uint32_t h = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)e << 10) | (mant >> 13), rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) h++; /* a carry rounds up the exponent */
    return (uint16_t)(sign | h);
}

static float from_half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
    if (e == 0) {
        float v = ldexpf((float)m, -24);
        return sign ? -v : v;
    }
    x = e == 31 ? sign | 0x7f800000 | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

static float from_bf16(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static float rounded(float v, int rounding)
{
    return rounding == ROUND_HALF ? from_half(to_half(v))
         : rounding == ROUND_BF16 ? from_bf16(to_bf16(v)) : v;
}

/* Element i of a buffer of a type, written and read as float. */
static void store(void *buf, size_t i, float v, int type)
{
    if (TYPES[type].bytes == 4) ((float *)buf)[i] = v;
    else ((uint16_t *)buf)[i] = TYPES[type].rounding == ROUND_HALF ? to_half(v) : to_bf16(v);
}

static float load(const void *buf, size_t i, int type)
{
    if (TYPES[type].bytes == 4) return ((const float *)buf)[i];
    uint16_t u = ((const uint16_t *)buf)[i];
    return TYPES[type].rounding == ROUND_HALF ? from_half(u) : from_bf16(u);
}

/* ---------------------------------------------------------------------------------------- */
/* The data and the CPU reference                                                            */
/* ---------------------------------------------------------------------------------------- */

/* Small deterministic values in [-0.5, 0.5): the same on every machine (as in lstm_v8.c). */
static float value(unsigned i, unsigned salt)
{
    unsigned v = i * 2654435761u + salt * 40503u;
    return (float)((v >> 8) % 1000) / 1000.0f - 0.5f;
}

/* Batch row b's data come from data row d(b): row 0 from 0, row B-1 from 1, so that the two
 * rows checked hold the same data at every batch size (one reference serves every batch). */
static int data_row(int b, int B) { return b == 0 ? 0 : (b == B - 1 ? 1 : b + 1); }
static int checked_rows(int B) { return B > 1 ? 2 : 1; }

/* Weights scaled like PyTorch's initialisation, U(-1/sqrt(H), 1/sqrt(H)); inputs in [-1, 1). */
static float weight(int salt, int g, int r, int c, int H)
{
    return 2.0f * value((unsigned)((g * H + r) * H + c), (unsigned)salt) / sqrtf((float)H);
}
static float x_value(int t, int d, int i, int H)
{
    return 2.0f * value((unsigned)((t * 4099 + d) * H + i), 5);
}
static float state_value(int salt, int d, int j, int H)
{
    return value((unsigned)(d * H + j), (unsigned)salt);
}
/* The gradients flowing in from above: only into the rows checked. */
static float dy_value(int t, int d, int j, int H)
{
    return value((unsigned)((t * 4099 + d) * H + j), 8);
}

/* One reference: weights rounded to a type, and the results of the checked rows over
 * check_steps steps. Input size = H. Gate order is cuDNN's (and PyTorch's): LSTM i, f, g, o;
 * GRU r (reset), z (update, cuDNN's i), n (new). */
typedef struct {
    int cell, H, rounding, T, rows;
    float *W, *R, *bW, *bR;                  /* [G][H][H], [G][H][H], [G][H], [G][H] */
    double *y, *hT, *cT, *dx, *dh0, *dc0;    /* [T][rows][H], [rows][H] */
    double *dW, *dR, *dbW, *dbR;             /* as the weights */
} Ref;

static void *zalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p) { perror("calloc"); exit(1); }
    return p;
}

static double sigm(double v) { return 1.0 / (1.0 + exp(-v)); }

static void reference(Ref *r)
{
    const int H = r->H, G = CELLS[r->cell].gates, T = r->T, lstm = r->cell == LSTM;
    const size_t GH = (size_t)G * H;
    double *x = zalloc(sizeof(double) * (size_t)T * H),
            *hs = zalloc(sizeof(double) * (size_t)(T + 1) * H);
    double *cs = zalloc(sizeof(double) * (size_t)(T + 1) * H),
            *act = zalloc(sizeof(double) * (size_t)T * GH);
    double *u = zalloc(sizeof(double) * (size_t)T * H), *ax = zalloc(sizeof(double) * GH);
    double *ah = zalloc(sizeof(double) * GH), *dax = zalloc(sizeof(double) * GH);
    double *dah = zalloc(sizeof(double) * GH), *dh = zalloc(sizeof(double) * H);
    double *dc = zalloc(sizeof(double) * H), *dhp = zalloc(sizeof(double) * H);
    for (int d = 0; d < r->rows; d++) {
        for (int t = 0; t < T; t++)
            for (int i = 0; i < H; i++)
                x[(size_t)t * H + i] = rounded(x_value(t, d, i, H), r->rounding);
        for (int j = 0; j < H; j++) {
            hs[j] = rounded(state_value(6, d, j, H), r->rounding);
            cs[j] = lstm ? rounded(state_value(7, d, j, H), r->rounding) : 0.0;
        }
        for (int t = 0; t < T; t++) { /* forward */
            const double *xt = x + (size_t)t * H, *h = hs + (size_t)t * H;
            double *a = act + (size_t)t * GH;
            for (size_t gj = 0; gj < GH; gj++) {
                double sx = r->bW[gj], sh = r->bR[gj];
                const float *w = r->W + gj * H, *rr = r->R + gj * H;
                for (int k = 0; k < H; k++) sx += (double)w[k] * xt[k], sh += (double)rr[k] * h[k];
                ax[gj] = sx, ah[gj] = sh;
            }
            for (int j = 0; j < H; j++) {
                double *hn = hs + (size_t)(t + 1) * H, *cn = cs + (size_t)(t + 1) * H;
                if (lstm) {
                    double i = sigm(ax[j] + ah[j]), f = sigm(ax[H + j] + ah[H + j]);
                    double g = tanh(ax[2 * H + j] + ah[2 * H + j]),
                            o = sigm(ax[3 * H + j] + ah[3 * H + j]);
                    a[j] = i, a[H + j] = f, a[2 * H + j] = g, a[3 * H + j] = o;
                    cn[j] = f * cs[(size_t)t * H + j] + i * g;
                    hn[j] = o * tanh(cn[j]);
                } else {
                    double rg = sigm(ax[j] + ah[j]), z = sigm(ax[H + j] + ah[H + j]);
                    double n = tanh(ax[2 * H + j] + rg * ah[2 * H + j]);
                    a[j] = rg, a[H + j] = z, a[2 * H + j] = n, u[(size_t)t * H + j] = ah[2 * H + j];
                    hn[j] = (1 - z) * n + z * h[j];
                }
            }
        }
        for (int t = 0; t < T; t++)
            for (int j = 0; j < H; j++)
                r->y[((size_t)t * r->rows + d) * H + j] = hs[(size_t)(t + 1) * H + j];
        for (int j = 0; j < H; j++) {
            r->hT[(size_t)d * H + j] = hs[(size_t)T * H + j];
            r->cT[(size_t)d * H + j] = cs[(size_t)T * H + j];
            dh[j] = rounded(state_value(9, d, j, H), r->rounding);
            dc[j] = lstm ? rounded(state_value(10, d, j, H), r->rounding) : 0.0;
        }
        for (int t = T - 1; t >= 0; t--) { /* back-propagation through time */
            const double *a = act + (size_t)t * GH, *h = hs + (size_t)t * H,
                    *xt = x + (size_t)t * H;
            for (int j = 0; j < H; j++) {
                double dht = dh[j] + rounded(dy_value(t, d, j, H), r->rounding);
                if (lstm) {
                    double i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j];
                    double c = cs[(size_t)(t + 1) * H + j], tc = tanh(c);
                    double dct = dc[j] + dht * o * (1 - tc * tc);
                    dax[j] = dct * g * i * (1 - i);
                    dax[H + j] = dct * cs[(size_t)t * H + j] * f * (1 - f);
                    dax[2 * H + j] = dct * i * (1 - g * g);
                    dax[3 * H + j] = dht * tc * o * (1 - o);
                    for (int g4 = 0; g4 < 4; g4++) dah[g4 * H + j] = dax[g4 * H + j];
                    dc[j] = dct * f;
                    dhp[j] = 0;
                } else {
                    double rg = a[j], z = a[H + j], n = a[2 * H + j];
                    double dn = dht * (1 - z) * (1 - n * n);
                    dax[j] = dn * u[(size_t)t * H + j] * rg * (1 - rg);
                    dax[H + j] = dht * (h[j] - n) * z * (1 - z);
                    dax[2 * H + j] = dn;
                    dah[j] = dax[j], dah[H + j] = dax[H + j], dah[2 * H + j] = dn * rg;
                    dhp[j] = dht * z;
                }
            }
            double *dxt = r->dx + ((size_t)t * r->rows + d) * H;
            for (size_t gj = 0; gj < GH; gj++) {
                const float *w = r->W + gj * H, *rr = r->R + gj * H;
                double *gw = r->dW + gj * H, *gr = r->dR + gj * H;
                for (int k = 0; k < H; k++) {
                    dxt[k] += (double)w[k] * dax[gj];
                    dhp[k] += (double)rr[k] * dah[gj];
                    gw[k] += dax[gj] * xt[k];
                    gr[k] += dah[gj] * h[k];
                }
                r->dbW[gj] += dax[gj], r->dbR[gj] += dah[gj];
            }
            memcpy(dh, dhp, sizeof(double) * H);
        }
        for (int j = 0; j < H; j++) {
            r->dh0[(size_t)d * H + j] = dh[j];
            r->dc0[(size_t)d * H + j] = dc[j];
        }
    }
    free(x), free(hs), free(cs), free(act), free(u), free(ax), free(ah), free(dax), free(dah);
    free(dh), free(dc), free(dhp);
}

static Ref *make_ref(int cell, int H, int rounding, int T, int rows)
{
    const int G = CELLS[cell].gates;
    const size_t GH = (size_t)G * H, GHH = GH * H;
    Ref *r = zalloc(sizeof *r);
    *r = (Ref){.cell = cell, .H = H, .rounding = rounding, .T = T, .rows = rows};
    r->W = zalloc(sizeof(float) * GHH), r->R = zalloc(sizeof(float) * GHH);
    r->bW = zalloc(sizeof(float) * GH), r->bR = zalloc(sizeof(float) * GH);
    for (int g = 0; g < G; g++)
        for (int j = 0; j < H; j++) {
            size_t gj = (size_t)g * H + j;
            for (int k = 0; k < H; k++) {
                r->W[gj * H + k] = rounded(weight(1, g, j, k, H), rounding);
                r->R[gj * H + k] = rounded(weight(2, g, j, k, H), rounding);
            }
            r->bW[gj] = rounded(0.5f * weight(3, g, j, 0, H), rounding);
            r->bR[gj] = rounded(0.5f * weight(4, g, j, 0, H), rounding);
        }
    size_t per_row = (size_t)rows * H;
    r->y = zalloc(sizeof(double) * (size_t)T * per_row),
            r->dx = zalloc(sizeof(double) * (size_t)T * per_row);
    r->hT = zalloc(sizeof(double) * per_row), r->cT = zalloc(sizeof(double) * per_row);
    r->dh0 = zalloc(sizeof(double) * per_row), r->dc0 = zalloc(sizeof(double) * per_row);
    r->dW = zalloc(sizeof(double) * GHH), r->dR = zalloc(sizeof(double) * GHH);
    r->dbW = zalloc(sizeof(double) * GH), r->dbR = zalloc(sizeof(double) * GH);
    reference(r);
    return r;
}

/* One reference per cell, hidden size and rounding, made when first needed and kept. */
enum { MAX_REFS = NCELLS * MAX_SIZES * 3 };
static Ref *refs[MAX_REFS];

static Ref *ref_for(int cell, int H, int rounding)
{
    int i = 0;
    for (; i < MAX_REFS && refs[i]; i++)
        if (refs[i]->cell == cell && refs[i]->H == H && refs[i]->rounding == rounding)
            return refs[i];
    if (i == MAX_REFS) { fprintf(stderr, "too many references\n"); exit(1); }
    return refs[i] = make_ref(cell, H, rounding, opt.check_steps, 2);
}

/* --cpu-reference CELL H B T TYPE: the data as the GPU gets them (every batch row), and the
 * reference's results (the checked rows; gradients are zero outside them), as JSON. */
static void print_doubles(const char *name, const double *a, size_t n)
{
    printf(",\n\"%s\": [", name);
    for (size_t i = 0; i < n; i++) printf("%s%.17g", i ? ", " : "", a[i]);
    printf("]");
}

static void print_floats(const char *name, const float *a, size_t n)
{
    printf(",\n\"%s\": [", name);
    for (size_t i = 0; i < n; i++) printf("%s%.9g", i ? ", " : "", a[i]);
    printf("]");
}

static int print_reference(int cell, int H, int B, int T, int type)
{
    const int G = CELLS[cell].gates, rows = checked_rows(B), rnd = TYPES[type].rounding;
    Ref *r = make_ref(cell, H, rnd, T, rows);
    size_t TBH = (size_t)T * B * H, BH = (size_t)B * H;
    float *x = zalloc(sizeof(float) * TBH), *dy = zalloc(sizeof(float) * TBH);
    float *h0 = zalloc(sizeof(float) * BH), *c0 = zalloc(sizeof(float) * BH);
    float *dhy = zalloc(sizeof(float) * BH), *dcy = zalloc(sizeof(float) * BH);
    double *dx = zalloc(sizeof(double) * TBH), *dh0 = zalloc(sizeof(double) * BH);
    double *dc0 = zalloc(sizeof(double) * BH);
    for (int b = 0; b < B; b++) {
        int d = data_row(b, B), checked = d < rows;
        for (int j = 0; j < H; j++) {
            h0[(size_t)b * H + j] = rounded(state_value(6, d, j, H), rnd);
            c0[(size_t)b * H + j] = rounded(state_value(7, d, j, H), rnd);
            dhy[(size_t)b * H + j] = checked ? rounded(state_value(9, d, j, H), rnd) : 0;
            dcy[(size_t)b * H + j] = checked ? rounded(state_value(10, d, j, H), rnd) : 0;
            if (checked)
                dh0[(size_t)b * H + j] = r->dh0[(size_t)d * H + j],
                        dc0[(size_t)b * H + j] = r->dc0[(size_t)d * H + j];
        }
        for (int t = 0; t < T; t++)
            for (int j = 0; j < H; j++) {
                size_t i = ((size_t)t * B + b) * H + j;
                x[i] = rounded(x_value(t, d, j, H), rnd);
                dy[i] = checked ? rounded(dy_value(t, d, j, H), rnd) : 0;
                if (checked) dx[i] = r->dx[((size_t)t * rows + d) * H + j];
            }
    }
    printf("{\"cell\": \"%s\", \"type\": \"%s\", \"T\": %d, \"B\": %d, \"H\": %d, \"rows\": [0",
           CELLS[cell].name, TYPES[type].name, T, B, H);
    if (rows > 1) printf(", %d", B - 1);
    printf("]");
    size_t GHH = (size_t)G * H * H, GH = (size_t)G * H;
    print_floats("W", r->W, GHH), print_floats("R", r->R, GHH);
    print_floats("bW", r->bW, GH), print_floats("bR", r->bR, GH);
    print_floats("x", x, TBH), print_floats("h0", h0, BH), print_floats("dy", dy, TBH);
    print_floats("dhy", dhy, BH);
    print_doubles("y", r->y, (size_t)T * rows * H), print_doubles("hT", r->hT, (size_t)rows * H);
    print_doubles("dx", dx, TBH), print_doubles("dh0", dh0, BH);
    print_doubles("dW", r->dW, GHH), print_doubles("dR", r->dR, GHH);
    print_doubles("dbW", r->dbW, GH), print_doubles("dbR", r->dbR, GH);
    if (cell == LSTM) {
        print_floats("c0", c0, BH), print_floats("dcy", dcy, BH);
        print_doubles("cT", r->cT, (size_t)rows * H), print_doubles("dc0", dc0, BH);
    }
    printf("\n}\n");
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Libraries opened at run time: cuBLAS, NVRTC, the CUDA driver                              */
/* ---------------------------------------------------------------------------------------- */

/* Their functions, declared here (cuBLAS's and NVRTC's headers are not where the Makefile
 * looks; the tests compile this file with them and check each type). Enums are passed as the
 * unsigned or int that gcc gives them. */
typedef struct cublasContext *rl_cublasHandle;
typedef struct _nvrtcProgram *rl_nvrtcProgram;
typedef unsigned (*rl_cublasCreate)(rl_cublasHandle *);
typedef unsigned (*rl_cublasDestroy)(rl_cublasHandle);
typedef unsigned (*rl_cublasSetStream)(rl_cublasHandle, cudaStream_t);
typedef unsigned (*rl_cublasGetProperty)(libraryPropertyType, int *);
typedef unsigned (*rl_cublasGemmEx)(rl_cublasHandle, unsigned, unsigned, int, int, int,
                                     const void *, const void *, cudaDataType, int,
                                     const void *, cudaDataType, int, const void *, void *,
                                     cudaDataType, int, unsigned, int);
typedef const char *(*rl_cublasGetStatusName)(unsigned);
typedef unsigned (*rl_nvrtcVersion)(int *, int *);
typedef const char *(*rl_nvrtcGetErrorString)(unsigned);
typedef unsigned (*rl_nvrtcCreateProgram)(rl_nvrtcProgram *, const char *, const char *, int,
                                           const char *const *, const char *const *);
typedef unsigned (*rl_nvrtcDestroyProgram)(rl_nvrtcProgram *);
typedef unsigned (*rl_nvrtcCompileProgram)(rl_nvrtcProgram, int, const char *const *);
typedef unsigned (*rl_nvrtcGetSize)(rl_nvrtcProgram, size_t *);
typedef unsigned (*rl_nvrtcGet)(rl_nvrtcProgram, char *);

#ifdef RNN_LIMITS_HEADER_CHECK /* the tests include cublas_v2.h and nvrtc.h, then this file */
#define SAME(mine, theirs) \
    _Static_assert(__builtin_types_compatible_p(mine, __typeof__(&theirs)), #theirs)
SAME(rl_cublasCreate, cublasCreate_v2);
SAME(rl_cublasDestroy, cublasDestroy_v2);
SAME(rl_cublasSetStream, cublasSetStream_v2);
SAME(rl_cublasGetProperty, cublasGetProperty);
SAME(rl_cublasGemmEx, cublasGemmEx);
SAME(rl_cublasGetStatusName, cublasGetStatusName);
SAME(rl_nvrtcVersion, nvrtcVersion);
SAME(rl_nvrtcGetErrorString, nvrtcGetErrorString);
SAME(rl_nvrtcCreateProgram, nvrtcCreateProgram);
SAME(rl_nvrtcDestroyProgram, nvrtcDestroyProgram);
SAME(rl_nvrtcCompileProgram, nvrtcCompileProgram);
SAME(rl_nvrtcGetSize, nvrtcGetPTXSize);
SAME(rl_nvrtcGetSize, nvrtcGetCUBINSize);
SAME(rl_nvrtcGetSize, nvrtcGetProgramLogSize);
SAME(rl_nvrtcGet, nvrtcGetPTX);
SAME(rl_nvrtcGet, nvrtcGetCUBIN);
SAME(rl_nvrtcGet, nvrtcGetProgramLog);
_Static_assert((int)RL_CUBLAS_OP_N == (int)CUBLAS_OP_N, "CUBLAS_OP_N");
_Static_assert((int)RL_CUBLAS_GEMM_DEFAULT == (int)CUBLAS_GEMM_DEFAULT, "CUBLAS_GEMM_DEFAULT");
_Static_assert((int)RL_CUBLAS_COMPUTE_32F == (int)CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F");
_Static_assert((int)RL_CUBLAS_COMPUTE_32F_FAST_TF32 == (int)CUBLAS_COMPUTE_32F_FAST_TF32, "TF32");
_Static_assert(CUBLAS_STATUS_SUCCESS == 0 && NVRTC_SUCCESS == 0, "success is 0");
#endif

#define NAME(f) NAME_(f) /* the symbol a macro of cuda.h names: cuLaunchKernel or _ptsz */
#define NAME_(f) #f

static struct {
    void *lib;
    char file[64];
    rl_cublasCreate create;
    rl_cublasDestroy destroy;
    rl_cublasSetStream set_stream;
    rl_cublasGetProperty get_property;
    rl_cublasGemmEx gemm;
    rl_cublasGetStatusName status_name; /* optional */
} cublas;

static struct {
    void *lib;
    char file[64];
    rl_nvrtcVersion version;
    rl_nvrtcGetErrorString error;
    rl_nvrtcCreateProgram create;
    rl_nvrtcDestroyProgram destroy;
    rl_nvrtcCompileProgram compile;
    rl_nvrtcGetSize ptx_size, cubin_size, log_size;
    rl_nvrtcGet ptx, cubin, log;
} nvrtc;

static struct {
    void *lib;
    __typeof__(&cuCtxGetCurrent) ctx_get_current;
    __typeof__(&cuModuleLoadData) module_load_data;
    __typeof__(&cuModuleGetFunction) module_get_function;
    __typeof__(&cuLaunchKernel) launch;
    __typeof__(&cuLaunchCooperativeKernel) launch_cooperative;
    __typeof__(&cuOccupancyMaxActiveBlocksPerMultiprocessor) occupancy;
    __typeof__(&cuGetErrorName) error_name;
} driver;

/* Look up `name` in `lib` into `slot` (a function pointer); false, with the name in `why`,
 * when it is missing. */
static int find(void *lib, const char *name, void *slot, size_t size, char *why, size_t n)
{
    void *f = dlsym(lib, name);
    if (!f) {
        snprintf(why, n, "%s has no %s", "the library", name);
        return 0;
    }
    memcpy(slot, &f, size);
    return 1;
}
#define FIND(lib, name, slot, why) find(lib, name, &(slot), sizeof(slot), why, sizeof(why))

/* Open the first of libNAME.so.<major> for the CUDA runtime this program was built with,
 * then 13, then 12: the wheels' folders are on the program's rpath. */
static void *open_cuda_library(const char *name, char *file, size_t n)
{
    int majors[3] = {CUDART_VERSION / 1000, 13, 12};
    for (int i = 0; i < 3; i++) {
        snprintf(file, n, "lib%s.so.%d", name, majors[i]);
        void *lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
        if (lib) return lib;
    }
    snprintf(file, n, "lib%s.so", name);
    return NULL;
}

static char cublas_problem[256], nvrtc_problem[256], driver_problem[256];

static int open_cublas(void)
{
    if (cublas.lib) return 1;
    void *lib = open_cuda_library("cublas", cublas.file, sizeof cublas.file);
    if (!lib) {
        snprintf(cublas_problem, sizeof cublas_problem, "cannot open %s: %s", cublas.file,
                 dlerror());
        return 0;
    }
    char *why = cublas_problem;
    if (!FIND(lib, "cublasCreate_v2", cublas.create, cublas_problem)
        || !FIND(lib, "cublasDestroy_v2", cublas.destroy, cublas_problem)
        || !FIND(lib, "cublasSetStream_v2", cublas.set_stream, cublas_problem)
        || !FIND(lib, "cublasGetProperty", cublas.get_property, cublas_problem)
        || !FIND(lib, "cublasGemmEx", cublas.gemm, cublas_problem)) {
        (void)why;
        return 0;
    }
    char ignored[64];
    if (!FIND(lib, "cublasGetStatusName", cublas.status_name, ignored)) cublas.status_name = NULL;
    cublas.lib = lib;
    return 1;
}

static int open_nvrtc(void)
{
    if (nvrtc.lib) return 1;
    void *lib = open_cuda_library("nvrtc", nvrtc.file, sizeof nvrtc.file);
    if (!lib) {
        snprintf(nvrtc_problem, sizeof nvrtc_problem, "cannot open %s: %s", nvrtc.file, dlerror());
        return 0;
    }
    if (!FIND(lib, "nvrtcVersion", nvrtc.version, nvrtc_problem)
        || !FIND(lib, "nvrtcGetErrorString", nvrtc.error, nvrtc_problem)
        || !FIND(lib, "nvrtcCreateProgram", nvrtc.create, nvrtc_problem)
        || !FIND(lib, "nvrtcDestroyProgram", nvrtc.destroy, nvrtc_problem)
        || !FIND(lib, "nvrtcCompileProgram", nvrtc.compile, nvrtc_problem)
        || !FIND(lib, "nvrtcGetPTXSize", nvrtc.ptx_size, nvrtc_problem)
        || !FIND(lib, "nvrtcGetPTX", nvrtc.ptx, nvrtc_problem)
        || !FIND(lib, "nvrtcGetCUBINSize", nvrtc.cubin_size, nvrtc_problem)
        || !FIND(lib, "nvrtcGetCUBIN", nvrtc.cubin, nvrtc_problem)
        || !FIND(lib, "nvrtcGetProgramLogSize", nvrtc.log_size, nvrtc_problem)
        || !FIND(lib, "nvrtcGetProgramLog", nvrtc.log, nvrtc_problem))
        return 0;
    nvrtc.lib = lib;
    return 1;
}

static int open_driver(void)
{
    if (driver.lib) return 1;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(driver_problem, sizeof driver_problem, "cannot open libcuda.so.1: %s", dlerror());
        return 0;
    }
    if (!FIND(lib, NAME(cuCtxGetCurrent), driver.ctx_get_current, driver_problem)
        || !FIND(lib, NAME(cuModuleLoadData), driver.module_load_data, driver_problem)
        || !FIND(lib, NAME(cuModuleGetFunction), driver.module_get_function, driver_problem)
        || !FIND(lib, NAME(cuLaunchKernel), driver.launch, driver_problem)
        || !FIND(lib, NAME(cuLaunchCooperativeKernel), driver.launch_cooperative, driver_problem)
        || !FIND(lib, NAME(cuOccupancyMaxActiveBlocksPerMultiprocessor), driver.occupancy,
                 driver_problem)
        || !FIND(lib, NAME(cuGetErrorName), driver.error_name, driver_problem))
        return 0;
    driver.lib = lib;
    return 1;
}

/* The two kernels of the floors, compiled with NVRTC. The barrier is a sense-reversing one on
 * a counter and a generation number: the last block to arrive resets the counter and moves
 * the generation on; the others wait for it to move. Launched cooperatively, so that every
 * block is resident at once. */
static const char KERNELS[] =
    "extern \"C\" __global__ void empty_kernel() {}\n"
    "extern \"C\" __global__ void grid_barrier_loop(unsigned int *bar, int iterations) {\n"
    "    volatile unsigned int *generation = bar + 1;\n"
    "    for (int i = 0; i < iterations; i++) {\n"
    "        __syncthreads();\n"
    "        if (threadIdx.x == 0) {\n"
    "            unsigned int seen = *generation;\n"
    "            __threadfence();\n"
    "            if (atomicAdd(bar, 1u) == gridDim.x - 1) {\n"
    "                atomicExch(bar, 0u);\n"
    "                __threadfence();\n"
    "                atomicAdd(bar + 1, 1u);\n"
    "            } else {\n"
    "                while (*generation == seen) {}\n"
    "            }\n"
    "            __threadfence();\n"
    "        }\n"
    "        __syncthreads();\n"
    "    }\n"
    "}\n";

/* Compile KERNELS for sm_<arch> (a cubin) or, failing that, compute_<arch> (PTX the driver
 * translates). Returns the image (malloc'd) or NULL with the reason in `why`. */
static char *compile_kernels(int arch, char *what, size_t what_n, char *why, size_t why_n)
{
    if (!open_nvrtc()) {
        copy(why, why_n, nvrtc_problem);
        return NULL;
    }
    for (int cubin = 1; cubin >= 0; cubin--) {
        char option[64];
        snprintf(option, sizeof option, "--gpu-architecture=%s_%d", cubin ? "sm" : "compute", arch);
        const char *options[] = {option};
        rl_nvrtcProgram prog;
        unsigned rc = nvrtc.create(&prog, KERNELS, "rnn_limits_floors.cu", 0, NULL, NULL);
        if (rc) {
            snprintf(why, why_n, "nvrtcCreateProgram: %s", nvrtc.error(rc));
            return NULL;
        }
        rc = nvrtc.compile(prog, 1, options);
        if (rc) {
            size_t n = 0;
            nvrtc.log_size(prog, &n);
            char *log = zalloc(n + 1);
            nvrtc.log(prog, log);
            snprintf(why, why_n, "nvrtcCompileProgram (%s): %s: %s", option, nvrtc.error(rc), log);
            free(log);
            nvrtc.destroy(&prog);
            continue;
        }
        size_t n = 0;
        (cubin ? nvrtc.cubin_size : nvrtc.ptx_size)(prog, &n);
        char *image = zalloc(n + 1);
        (cubin ? nvrtc.cubin : nvrtc.ptx)(prog, image);
        nvrtc.destroy(&prog);
        copy(what, what_n, option + strlen("--gpu-architecture="));
        return image;
    }
    return NULL;
}

/* ---------------------------------------------------------------------------------------- */
/* The plan: sizes in order, cells, the time budget                                          */
/* ---------------------------------------------------------------------------------------- */

enum { PENDING, OK, REFUSED, MISMATCH, LEFT_OUT };
static const char *const STATES[] = {"pending", "ok", "refused", "mismatch", "left_out"};

typedef struct {
    int cell, algo, type, mode, hidden, batch, block;
    int state;
    const char *stage;      /* the call that refused */
    int status;             /* its cudnnStatus_t */
    char message[320];      /* cudnnGetLastErrorString after it */
    char worst[8];          /* the array with the largest error in the check */
    double error;           /* that error (max |diff| / max |reference|) */
    Spread us_step, host_us_call;
    int calls;
    double tflops, seconds, build_ms;
    size_t weight_bytes, work_bytes, reserve_bytes;
} Cell;

typedef struct { int hidden, batch, first, count, state; double seconds, estimate; } Block;

enum { BLOCK_PENDING, BLOCK_DONE, BLOCK_PARTIAL, BLOCK_LEFT_OUT };
static const char *const BLOCK_STATES[] = {"pending", "done", "partial", "left_out"};

static Cell *cells;
static int ncells;
static Block blocks[MAX_SIZES * MAX_SIZES];
static int nblocks;

static double flops(const Cell *c)
{
    double f = 2.0 * CELLS[c->cell].gates * c->batch * (double)opt.steps * c->hidden
             * (2.0 * c->hidden);
    return c->mode == TRAINING ? 3 * f : f;
}

static int cheaper(const void *a, const void *b)
{
    const Block *x = a, *y = b;
    double cx = (double)x->batch * x->hidden * x->hidden,
            cy = (double)y->batch * y->hidden * y->hidden;
    if (cx != cy) return cx < cy ? -1 : 1;
    return x->hidden != y->hidden ? x->hidden - y->hidden : x->batch - y->batch;
}

/* Sizes in the order they are measured, and every cell of each: for a size, LSTM then GRU;
 * in each, the types, in each the algorithms, each in both modes. */
static void make_plan(void)
{
    int hc = opt.hidden[(opt.nh - 1) / 2], bc = opt.batch[(opt.nb - 1) / 2];
    nblocks = 0;
    blocks[nblocks++] = (Block){.hidden = hc, .batch = bc};
    for (int i = 0; i < opt.nh; i++)
        if (opt.hidden[i] != hc) blocks[nblocks++] = (Block){.hidden = opt.hidden[i], .batch = bc};
    for (int i = 0; i < opt.nb; i++)
        if (opt.batch[i] != bc) blocks[nblocks++] = (Block){.hidden = hc, .batch = opt.batch[i]};
    int rest = nblocks;
    for (int i = 0; i < opt.nh; i++)
        for (int j = 0; j < opt.nb; j++)
            if (opt.hidden[i] != hc && opt.batch[j] != bc)
                blocks[nblocks++] = (Block){.hidden = opt.hidden[i], .batch = opt.batch[j]};
    qsort(blocks + rest, (size_t)(nblocks - rest), sizeof(Block), cheaper);
    ncells = 0;
    cells = zalloc(sizeof(Cell) * (size_t)nblocks * NCELLS * NTYPES * NALGOS * NMODES);
    for (int k = 0; k < nblocks; k++) {
        blocks[k].first = ncells;
        for (int cell = 0; cell < NCELLS; cell++)
            for (int type = 0; type < NTYPES; type++)
                for (int algo = 0; algo < NALGOS; algo++)
                    for (int mode = 0; mode < NMODES; mode++)
                        if ((opt.cells >> cell & 1) && (opt.types >> type & 1)
                            && (opt.algos >> algo & 1) && (opt.modes >> mode & 1))
                            cells[ncells++] = (Cell){.cell = cell, .algo = algo, .type = type,
                                                     .mode = mode, .hidden = blocks[k].hidden,
                                                     .batch = blocks[k].batch, .block = k};
        blocks[k].count = ncells - blocks[k].first;
    }
}

/* What one configuration (its modes' cells) is expected to take, learnt as the run goes: a
 * rate per type and mode (the slowest seen so far), the share of configurations refused per
 * algorithm and type, and a correction of the whole (the time taken over the estimate). */
static struct {
    double rate[NTYPES][NMODES];        /* FLOP/s */
    int tried[NALGOS][NTYPES], refused[NALGOS][NTYPES];
    double overhead_s, build_s, correction;
} learnt = {.overhead_s = 0.1, .build_s = 3.0, .correction = 1.0};

static double estimate_config(const Cell *c, int n)
{
    double s = learnt.overhead_s + (c->algo == PERSIST_DYNAMIC ? learnt.build_s : 0);
    for (int i = 0; i < n; i++) {
        double rate = learnt.rate[c[i].type][c[i].mode];
        if (rate <= 0) rate = c[i].type == FP32 ? 5e12 : 20e12;
        s += opt.warmup_s + opt.samples * fmax(opt.sample_s, flops(&c[i]) / rate);
    }
    int tried = learnt.tried[c->algo][c->type];
    double refused = tried ? (double)learnt.refused[c->algo][c->type] / tried : 0;
    return learnt.correction * (refused * 0.05 + (1 - refused) * s);
}

static int config_size(int first, int end)
{
    int n = 1;
    while (first + n < end && cells[first + n].cell == cells[first].cell
           && cells[first + n].algo == cells[first].algo
                   && cells[first + n].type == cells[first].type)
        n++;
    return n;
}

static double gemm_floor_estimate(void)
{
    return 2 * NTYPES * (opt.warmup_s + opt.samples * opt.sample_s) + 0.05;
}

static double estimate_block(const Block *b)
{
    double s = opt.floors ? gemm_floor_estimate() : 0;
    for (int i = b->first; i < b->first + b->count;) {
        int n = config_size(i, b->first + b->count);
        s += estimate_config(&cells[i], n);
        i += n;
    }
    return s;
}

static void learn(const Cell *c, int n, double seconds, double estimate)
{
    learnt.tried[c->algo][c->type]++;
    int ok = 0;
    for (int i = 0; i < n; i++) {
        if (c[i].state == OK) {
            ok = 1;
            double rate = flops(&c[i]) / (c[i].us_step.median * opt.steps * 1e-6);
            double *r = &learnt.rate[c[i].type][c[i].mode];
            if (*r <= 0 || rate < *r) *r = rate;
        }
    }
    if (!ok && c->state == REFUSED) learnt.refused[c->algo][c->type]++;
    if (c->algo == PERSIST_DYNAMIC && c->build_ms > 0)
        learnt.build_s = 0.5 * learnt.build_s + 0.5e-3 * c->build_ms;
    if (ok && estimate > 0) {
        double k = learnt.correction * seconds / estimate;
        k = fmin(5.0, fmax(0.2, k));
        learnt.correction = 0.7 * learnt.correction + 0.3 * k;
    }
}

/* ---------------------------------------------------------------------------------------- */
/* The floors                                                                                */
/* ---------------------------------------------------------------------------------------- */

typedef struct { const char *name; char status[320]; Spread us; double extra; int done; } Floor;
enum { LAUNCH_BACK_TO_BACK, LAUNCH_SYNC, GRID_BARRIER, NFLOORS };
static Floor floors[NFLOORS] = {{.name = "kernel launch, back to back"},
                                {.name = "kernel launch and synchronise"},
                                {.name = "grid-wide barrier"}};
static char kernels_image_kind[32], kernels_problem[600];
static int barrier_blocks, barrier_threads = 128, barrier_iterations = 2000;

typedef struct {
    int type, gates, hidden, batch, m, n, k; /* C (m x n) = A (m x k) B (k x n) */
    char status[160];
    Spread us;
    double tflops;
    int done;
} Gemm;

enum { MAX_GEMMS = NTYPES * 2 * MAX_SIZES * MAX_SIZES + NTYPES };
static Gemm gemms[MAX_GEMMS];
static int ngemms;
static char gemm_problem[320]; /* why no GEMM was timed, if none was */
static char gemm_check[NTYPES][160];

/* ---------------------------------------------------------------------------------------- */
/* Provenance and the result files                                                           */
/* ---------------------------------------------------------------------------------------- */

static struct {
    char gpu[256], cpu[256], platform[512], driver[64], cc[16], date[32];
    int sms, cuda_runtime, cuda_driver, cublas[3], nvrtc[2], cores;
    size_t memory;
} machine;

static void read_machine(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    snprintf(machine.cpu, sizeof machine.cpu, "unknown CPU");
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            char *v = strchr(line, ':') + 1;
            while (*v == ' ') v++;
            v[strcspn(v, "\n")] = 0;
            copy(machine.cpu, sizeof machine.cpu, v);
            break;
        }
    }
    if (f) fclose(f);
    f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f)) machine.cores += strncmp(line, "processor", 9) == 0;
    if (f) fclose(f);
    struct utsname u;
    if (uname(&u) == 0) snprintf(machine.platform, sizeof machine.platform, "%s-%s-%s", u.sysname,
                                 u.release, u.machine);
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05 ..." */
    f = fopen("/proc/driver/nvidia/version", "r");
    if (f && fgets(line, sizeof line, f)) {
        for (char *w = strtok(line, " \t\n"); w; w = strtok(NULL, " \t\n"))
            if (w[0] >= '0' && w[0] <= '9' && strchr(w, '.')) {
                copy(machine.driver, sizeof machine.driver, w);
                break;
            }
    }
    if (f) fclose(f);
    time_t t = time(NULL);
    strftime(machine.date, sizeof machine.date, "%Y-%m-%dT%H:%M:%S+00:00", gmtime(&t));
}

static void put_version(Buf *b, const char *key, int v) /* 12090 -> "12.9" */
{
    if (v > 0) put(b, ", \"%s\": \"%d.%d\"", key, v / 1000, v % 1000 / 10);
}

static void put_provenance(Buf *b)
{
    size_t v = cudnnGetVersion();
    put(b, "{\"machine\": ");
    char label[600];
    if (opt.dry_run)
        snprintf(label, sizeof label, "CPU: %s (%d cores)", machine.cpu, machine.cores);
    else snprintf(label, sizeof label, "GPU: %s", machine.gpu);
    put_str(b, label);
    put(b, ", \"device\": \"%s\", \"device_name\": ", opt.dry_run ? "CPU" : "GPU");
    put_str(b, opt.dry_run ? machine.cpu : machine.gpu);
    if (!opt.dry_run) {
        put(b, ", \"gpu_compute_capability\": \"%s\", \"gpu_sms\": %d, \"gpu_memory_mib\": %zu",
            machine.cc, machine.sms, machine.memory >> 20);
        put_version(b, "cuda_driver", machine.cuda_driver);
        if (machine.driver[0]) put(b, ", \"driver\": "), put_str(b, machine.driver);
    }
    put(b, ", \"cudnn\": \"%zu.%zu.%zu\", \"cudnn_header\": \"%d.%d.%d\"", v / 10000, v / 100 % 100,
        v % 100, CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
    put_version(b, "cudnn_built_with_cuda", (int)cudnnGetCudartVersion());
    put_version(b, "cuda_runtime", machine.cuda_runtime);
    put_version(b, "cuda_runtime_header", CUDART_VERSION);
    if (machine.cublas[0])
        put(b, ", \"cublas\": \"%d.%d.%d\"", machine.cublas[0], machine.cublas[1],
            machine.cublas[2]);
    if (machine.nvrtc[0]) put(b, ", \"nvrtc\": \"%d.%d\"", machine.nvrtc[0], machine.nvrtc[1]);
    put(b, ", \"cpu_model\": "), put_str(b, machine.cpu);
    put(b, ", \"cpu_cores\": %d, \"platform\": ", machine.cores), put_str(b, machine.platform);
    put(b, ", \"compiler\": "), put_str(b, "gcc " __VERSION__);
    put(b, ", \"date\": \"%s\"}", machine.date);
}

static void put_check(Buf *b, const Cell *c)
{
    put(b, ", \"check\": {\"steps\": %d, \"rows\": [0%s", opt.check_steps,
        c->batch > 1 ? ", " : "");
    if (c->batch > 1) put(b, "%d", c->batch - 1);
    put(b, "], \"tolerance\": "), put_num(b, TYPES[c->type].tol);
    put(b, ", \"max_error\": "), put_num(b, c->error);
    put(b, ", \"worst\": "), put_str(b, c->worst), put(b, "}");
}

static void put_cell(Buf *b, const Cell *c)
{
    const TypeInfo *t = &TYPES[c->type];
    put(b, "{\"cell\": \"%s\", \"mode\": \"%s\", \"algo\": \"%s\", "
        "\"algo_enum\": \"CUDNN_RNN_ALGO_%s\", \"type\": \"%s\", \"data_type\": \"%s\", "
        "\"math_precision\": \"%s\", \"math_type\": \"%s\", "
        "\"hidden\": %d, \"input\": %d, \"batch\": %d, \"steps\": %d, \"status\": \"%s\"",
        CELLS[c->cell].name, MODES[c->mode], ALGOS[c->algo].name, ALGOS[c->algo].name, t->name,
        t->data_name, t->prec_name, t->math_name, c->hidden, c->hidden, c->batch, opt.steps,
        STATES[c->state]);
    put(b, ", \"flops_per_call\": "), put_num(b, flops(c));
    if (c->state == REFUSED) {
        put(b, ", \"refused_by\": "), put_str(b, c->stage);
        put(b, ", \"cudnn_status\": "), put_str(b, cudnnGetErrorString((cudnnStatus_t)c->status));
        put(b, ", \"cudnn_status_code\": %d, \"cudnn_message\": ", c->status), put_str(b,
                c->message);
    }
    if (c->state == OK || c->state == MISMATCH) put_check(b, c);
    if (c->state == OK) {
        put(b, ", \"us_per_step\": "), put_spread(b, &c->us_step);
        put(b, ", \"host_us_per_call\": "), put_spread(b, &c->host_us_call);
        put(b, ", \"calls_per_sample\": %d, \"tflops\": ", c->calls), put_num(b, c->tflops);
    }
    if (c->weight_bytes) put(b, ", \"weight_bytes\": %zu", c->weight_bytes);
    if (c->state == OK)
        put(b, ", \"workspace_bytes\": %zu, \"reserve_bytes\": %zu", c->work_bytes,
            c->reserve_bytes);
    if (c->algo == PERSIST_DYNAMIC && c->build_ms > 0)
        put(b, ", \"build_ms\": "), put_num(b, c->build_ms);
    put(b, "}");
}

static void put_floors(Buf *b)
{
    put(b, "{\"kernels\": ");
    put_str(b, kernels_image_kind[0] ? kernels_image_kind : kernels_problem);
    for (int i = 0; i < NFLOORS; i++) {
        const char *key = i == LAUNCH_BACK_TO_BACK ? "launch_back_to_back_us"
                        : i == LAUNCH_SYNC ? "launch_and_synchronise_us" : "grid_barrier_us";
        put(b, ", "), put_str(b, key);
        put(b, ": {\"what\": "), put_str(b, floors[i].name);
        put(b, ", \"status\": "), put_str(b, floors[i].done ? "ok" : floors[i].status);
        if (i == GRID_BARRIER)
            put(b, ", \"blocks\": %d, \"threads\": %d, \"iterations_per_launch\": %d",
                barrier_blocks,
                barrier_threads, barrier_iterations);
        if (floors[i].done) put(b, ", \"us\": "), put_spread(b, &floors[i].us);
        put(b, "}");
    }
    put(b, ", \"gemm_problem\": "), put_str(b, gemm_problem);
    put(b, ", \"gemm_check\": {");
    for (int t = 0; t < NTYPES; t++)
        put(b, "%s\"%s\": ", t ? ", " : "", TYPES[t].name), put_str(b, gemm_check[t]);
    put(b, "}, \"gemms\": [");
    for (int i = 0; i < ngemms; i++) {
        const Gemm *g = &gemms[i];
        put(b, "%s{\"what\": \"%s\", \"type\": \"%s\", \"compute\": \"%s\", "
            "\"m\": %d, \"n\": %d, \"k\": %d",
            i ? ",\n  " : "\n  ", g->gates ? "step" : "large", TYPES[g->type].name,
            TYPES[g->type].gemm_compute_name, g->m, g->n, g->k);
        if (g->gates)
            put(b, ", \"gates\": %d, \"hidden\": %d, \"batch\": %d", g->gates, g->hidden, g->batch);
        put(b, ", \"status\": "), put_str(b, g->done ? "ok" : g->status);
        if (g->done) {
            put(b, ", \"us\": "), put_spread(b, &g->us);
            put(b, ", \"tflops\": "), put_num(b, g->tflops);
        }
        put(b, "}");
    }
    put(b, "]}");
}

static double started_at, deadline;
static int any_mismatch;

static void put_common(Buf *b, const char *benchmark, const char *title, const char *metric,
                       const char *x_label)
{
    put(b, "{\"benchmark\": \"%s\", \"title\": ", benchmark), put_str(b, title);
    put(b, ", \"metric\": "), put_str(b, metric);
    put(b, ", \"lower_is_better\": true, \"x_label\": "), put_str(b, x_label);
    put(b, ", \"x_log\": true, \"expects_gpu\": true");
    if (opt.dry_run) put(b, ", \"dry_run\": true");
    put(b, ",\n\"provenance\": "), put_provenance(b);
}

/* The rows a chart draws: per step at the centre's batch, by hidden size. `fastest`: one row
 * per cell, mode and type, the fastest algorithm's (named in the row); otherwise every
 * algorithm and type of one cell and mode. */
static void put_rows(Buf *b, int batch, int fastest, int cell, int mode)
{
    int first = 1;
    for (int i = 0; i < ncells; i++) {
        const Cell *c = &cells[i];
        if (c->state != OK || c->batch != batch) continue;
        if (!fastest && (c->cell != cell || c->mode != mode)) continue;
        if (fastest) { /* skip it if another algorithm was faster at this size */
            int beaten = 0;
            for (int j = 0; j < ncells && !beaten; j++) {
                const Cell *o = &cells[j];
                beaten = o->state == OK && o->cell == c->cell && o->mode == c->mode
                      && o->type == c->type && o->hidden == c->hidden && o->batch == c->batch
                      && (o->us_step.median < c->us_step.median
                          || (o->us_step.median == c->us_step.median && j < i));
            }
            if (beaten) continue;
        }
        char variant[96];
        if (fastest)
            snprintf(variant, sizeof variant, "%s %s %s", CELLS[c->cell].name, MODES[c->mode],
                     TYPES[c->type].name);
        else snprintf(variant, sizeof variant, "%s %s", TYPES[c->type].name, ALGOS[c->algo].name);
        put(b, "%s{\"variant\": \"%s\", \"x\": %d, \"device\": \"%s\", \"algo\": \"%s\", "
            "\"tflops\": ",
            first ? "\n " : ",\n ", variant, c->hidden, opt.dry_run ? "CPU" : "GPU",
                    ALGOS[c->algo].name);
        put_num(b, c->tflops);
        Buf s = {0};
        put_spread(&s, &c->us_step);
        put(b, ", %s", s.p + 1); /* the spread's fields, inside this row */
        free(s.p);
        first = 0;
    }
}

static void write_results(void)
{
    int hc = blocks[0].hidden, bc = blocks[0].batch;
    char title[256], name[64];
    Buf b = {0};
    snprintf(title, sizeof title, "cuDNN from C: time per step of the fastest algorithm, by "
             "hidden size (batch %d, %d steps)", bc, opt.steps);
    put_common(&b, "rnn_limits", title, "µs per time step", "hidden size");
    put(&b, ",\n\"results\": [");
    put_rows(&b, bc, 1, 0, 0);
    put(&b, "],\n\"flops_formula\": \"2*G*B*T*H*(I+H), x3 for a training step; "
        "G=4 LSTM, 3 GRU; I=H\"");
    put(&b, ",\n\"types\": {");
    for (int t = 0; t < NTYPES; t++)
        put(&b, "%s\"%s\": {\"data_type\": \"%s\", \"math_precision\": \"%s\", "
            "\"math_type\": \"%s\", "
            "\"check_tolerance\": %g}", t ? ", " : "", TYPES[t].name, TYPES[t].data_name,
            TYPES[t].prec_name, TYPES[t].math_name, TYPES[t].tol);
    put(&b, "},\n\"timing\": {\"clock\": \"CUDA events around back-to-back calls on one stream\", "
        "\"warmup_ms\": %g, \"sample_ms\": %g, \"samples\": %d, \"check_steps\": %d}",
        1e3 * opt.warmup_s, 1e3 * opt.sample_s, opt.samples, opt.check_steps);
    put(&b, ",\n\"budget\": {\"started_unix\": %.3f, \"deadline_unix\": %.3f, "
        "\"seconds_used\": %.3f, \"from\": \"%s\", \"order\": \"centre (hidden %d, batch %d), "
        "then the other hidden sizes at "
        "batch %d, the other batches at hidden %d, then the rest by batch*hidden^2\", \"sizes\": [",
        started_at, deadline, now() - started_at,
                getenv("BENCH_DEADLINE") ? "BENCH_DEADLINE" : "--seconds",
        hc, bc, bc, hc);
    for (int k = 0; k < nblocks; k++)
        put(&b, "%s{\"hidden\": %d, \"batch\": %d, \"status\": \"%s\", \"seconds\": %.3f, "
            "\"estimate\": %.3f}",
            k ? ", " : "", blocks[k].hidden, blocks[k].batch, BLOCK_STATES[blocks[k].state],
            blocks[k].seconds, blocks[k].estimate);
    put(&b, "]}");
    put(&b, ",\n\"left_out\": [");
    int first = 1;
    for (int i = 0; i < ncells; i++)
        if (cells[i].state == LEFT_OUT) {
            const Cell *c = &cells[i];
            put(&b, "%s{\"cell\": \"%s\", \"mode\": \"%s\", \"algo\": \"%s\", \"type\": \"%s\", "
                "\"hidden\": %d, \"batch\": %d}", first ? "" : ", ", CELLS[c->cell].name,
                MODES[c->mode], ALGOS[c->algo].name, TYPES[c->type].name, c->hidden, c->batch);
            first = 0;
        }
    put(&b, "],\n\"floors\": "), put_floors(&b);
    put(&b, ",\n\"cells\": [");
    for (int i = 0; i < ncells; i++) put(&b, i ? ",\n " : "\n "), put_cell(&b, &cells[i]);
    put(&b, "]}\n");
    write_file("rnn_limits.json", &b);
    free(b.p);

    /* One chart per cell and mode: every algorithm and type. */
    for (int cell = 0; cell < NCELLS; cell++)
        for (int mode = 0; mode < NMODES; mode++) {
            if (!(opt.cells >> cell & 1) || !(opt.modes >> mode & 1)) continue;
            b = (Buf){0};
            snprintf(name, sizeof name, "rnn_limits_%s_%s", cell == LSTM ? "lstm" : "gru",
                     MODES[mode]);
            snprintf(title, sizeof title, "cuDNN %s, %s: time per step of each algorithm and type, "
                     "by hidden size (batch %d, %d steps)", CELLS[cell].name, MODES[mode], bc,
                             opt.steps);
            put_common(&b, name, title, "µs per time step", "hidden size");
            put(&b, ",\n\"results\": [");
            put_rows(&b, bc, 0, cell, mode);
            put(&b, "]}\n");
            strcat(name, ".json");
            write_file(name, &b);
            free(b.p);
        }

    /* The floors by hidden size at the centre's batch. */
    b = (Buf){0};
    snprintf(title, sizeof title, "Floors of one LSTM step on this GPU, by hidden size (batch %d)",
             bc);
    put_common(&b, "rnn_limits_floors", title, "µs", "hidden size");
    put(&b, ",\n\"results\": [");
    first = 1;
    for (int i = 0; i < ngemms; i++) {
        const Gemm *g = &gemms[i];
        if (!g->done || g->gates != 4 || g->batch != bc) continue;
        Buf s = {0};
        put_spread(&s, &g->us);
        put(&b, "%s{\"variant\": \"cuBLAS GEMM of one step, %s\", \"x\": %d, "
            "\"device\": \"%s\", %s",
            first ? "\n " : ",\n ", TYPES[g->type].name, g->hidden, opt.dry_run ? "CPU" : "GPU",
                    s.p + 1);
        free(s.p);
        first = 0;
    }
    for (int f = 0; f < NFLOORS; f++) {
        if (!floors[f].done || f == LAUNCH_SYNC) continue;
        for (int k = 0; k < nblocks; k++) {
            if (blocks[k].batch != bc || blocks[k].state == BLOCK_PENDING
                || blocks[k].state == BLOCK_LEFT_OUT) continue;
            Buf s = {0};
            put_spread(&s, &floors[f].us);
            put(&b, "%s{\"variant\": \"%s\", \"x\": %d, \"device\": \"%s\", %s",
                first ? "\n " : ",\n ",
                floors[f].name, blocks[k].hidden, opt.dry_run ? "CPU" : "GPU", s.p + 1);
            free(s.p);
            first = 0;
        }
    }
    put(&b, "],\n\"floors\": "), put_floors(&b);
    put(&b, "}\n");
    write_file("rnn_limits_floors.json", &b);
    free(b.p);
}

/* ---------------------------------------------------------------------------------------- */
/* Timing on the GPU                                                                         */
/* ---------------------------------------------------------------------------------------- */

static cudaStream_t stream;
static cudaEvent_t ev_start, ev_end;

/* One call of what is timed; 0, or a status that stops it (and names the call in *stage). */
typedef int (*Call)(void *ctx, const char **stage);

/* Warm up for opt.warmup_s, then opt.samples samples of `calls` back-to-back calls, as many as
 * fill opt.sample_s: device microseconds per call (CUDA events) and host microseconds to issue
 * one call. */
static int measure(Call call, void *ctx, const char **stage, Spread *dev_us, Spread *host_us,
                   int *calls)
{
    double start = real_now(), per_call = 0;
    int k = 1, rc;
    do {
        double t = real_now();
        for (int i = 0; i < k; i++)
            if ((rc = call(ctx, stage))) return rc;
        CHECK_CUDA(cudaStreamSynchronize(stream));
        double dt = real_now() - t;
        per_call = dt / k;
        if (dt < 0.002 && k < (1 << 16)) k *= 2;
    } while (real_now() - start < opt.warmup_s);
    int n = (int)ceil(opt.sample_s / fmax(per_call, 1e-7));
    *calls = n < 1 ? 1 : n > 100000 ? 100000 : n;
    dev_us->n = host_us->n = opt.samples;
    for (int s = 0; s < opt.samples; s++) {
        float ms = 0;
        double t0 = real_now();
        CHECK_CUDA(cudaEventRecord(ev_start, stream));
        for (int i = 0; i < *calls; i++)
            if ((rc = call(ctx, stage))) return rc;
        double t1 = real_now();
        CHECK_CUDA(cudaEventRecord(ev_end, stream));
        CHECK_CUDA(cudaEventSynchronize(ev_end));
        CHECK_CUDA(cudaEventElapsedTime(&ms, ev_start, ev_end));
        dev_us->v[s] = 1e3 * ms / *calls;
        host_us->v[s] = 1e6 * (t1 - t0) / *calls;
    }
    summarise(dev_us), summarise(host_us);
    return 0;
}

/* --- the floors on the GPU --- */

static CUfunction k_empty, k_barrier;
static void *barrier_state;

static int call_empty(void *ctx, const char **stage)
{
    (void)ctx;
    *stage = "cuLaunchKernel";
    return (int)driver.launch(k_empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL);
}

static int call_barrier(void *ctx, const char **stage)
{
    (void)ctx;
    void *params[] = {&barrier_state, &barrier_iterations};
    *stage = "cuLaunchCooperativeKernel";
    return (int)driver.launch_cooperative(k_barrier, (unsigned)barrier_blocks, 1, 1,
                                          (unsigned)barrier_threads, 1, 1, 0, stream, params);
}

static void floor_failed(int f, const char *stage, int rc)
{
    const char *name = "?";
    if (driver.error_name) driver.error_name((CUresult)rc, &name);
    snprintf(floors[f].status, sizeof floors[f].status, "%s: %s", stage, name);
}

static void measure_kernel_floors(int arch)
{
    char why[600] = "";
    char *image = compile_kernels(arch, kernels_image_kind, sizeof kernels_image_kind, why,
                                  sizeof why);
    if (!image) copy(kernels_problem, sizeof kernels_problem, why);
    else if (!open_driver()) copy(kernels_problem, sizeof kernels_problem, driver_problem);
    if (kernels_problem[0]) {
        kernels_image_kind[0] = 0;
        for (int f = 0; f < NFLOORS; f++)
            copy(floors[f].status, sizeof floors[f].status, kernels_problem);
        free(image);
        return;
    }
    CUcontext ctx = NULL;
    CUmodule module;
    int rc = (int)driver.ctx_get_current(&ctx);
    if (!rc) rc = (int)driver.module_load_data(&module, image);
    if (!rc) rc = (int)driver.module_get_function(&k_empty, module, "empty_kernel");
    if (!rc) rc = (int)driver.module_get_function(&k_barrier, module, "grid_barrier_loop");
    free(image);
    if (rc) {
        for (int f = 0; f < NFLOORS; f++) floor_failed(f, "loading the kernels", rc);
        return;
    }
    const char *stage = "";
    Spread host;
    int calls;
    rc = measure(call_empty, NULL, &stage, &floors[LAUNCH_BACK_TO_BACK].us, &host, &calls);
    if (rc) floor_failed(LAUNCH_BACK_TO_BACK, stage, rc);
    else floors[LAUNCH_BACK_TO_BACK].done = 1;
    /* Launch, then wait for it: what one dependent step costs when the host drives it. */
    Spread *rt = &floors[LAUNCH_SYNC].us;
    rt->n = opt.samples;
    for (int s = 0; s < opt.samples && !rc; s++) {
        double t0 = real_now();
        for (int i = 0; i < 200 && !rc; i++) {
            rc = call_empty(NULL, &stage);
            CHECK_CUDA(cudaStreamSynchronize(stream));
        }
        rt->v[s] = 1e6 * (real_now() - t0) / 200;
    }
    if (rc) floor_failed(LAUNCH_SYNC, stage, rc);
    else summarise(rt), floors[LAUNCH_SYNC].done = 1;
    /* The barrier: one block per SM, each iteration one grid-wide barrier. */
    int coop = 0, per_sm = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, 0));
    rc = (int)driver.occupancy(&per_sm, k_barrier, barrier_threads, 0);
    barrier_blocks = machine.sms;
    if (!coop) {
        snprintf(floors[GRID_BARRIER].status, sizeof floors[GRID_BARRIER].status,
                 "no cooperative launch on this GPU");
        return;
    }
    if (rc || per_sm < 1) {
        floor_failed(GRID_BARRIER, "cuOccupancyMaxActiveBlocksPerMultiprocessor", rc);
        return;
    }
    CHECK_CUDA(cudaMalloc(&barrier_state, 2 * sizeof(unsigned)));
    CHECK_CUDA(cudaMemset(barrier_state, 0, 2 * sizeof(unsigned)));
    Spread per_launch;
    rc = measure(call_barrier, NULL, &stage, &per_launch, &host, &calls);
    if (rc) floor_failed(GRID_BARRIER, stage, rc);
    else {
        floors[GRID_BARRIER].us.n = per_launch.n;
        for (int s = 0; s < per_launch.n; s++)
            floors[GRID_BARRIER].us.v[s] = per_launch.v[s] / barrier_iterations;
        summarise(&floors[GRID_BARRIER].us);
        floors[GRID_BARRIER].done = 1;
    }
    CHECK_CUDA(cudaFree(barrier_state));
}

/* --- cuBLAS --- */

static rl_cublasHandle blas;
typedef struct { const Gemm *g; void *a, *b, *c; } GemmCall;

static int call_gemm(void *ctx, const char **stage)
{
    GemmCall *x = ctx;
    const Gemm *g = x->g;
    const float one = 1.0f, zero = 0.0f;
    cudaDataType t = TYPES[g->type].gemm_type;
    *stage = "cublasGemmEx";
    return (int)cublas.gemm(blas, RL_CUBLAS_OP_N, RL_CUBLAS_OP_N, g->m, g->n, g->k, &one, x->a, t,
                            g->m, x->b, t, g->k, &zero, x->c, t, g->m, TYPES[g->type].gemm_compute,
                            RL_CUBLAS_GEMM_DEFAULT);
}

static const char *blas_status(int rc)
{
    static char s[48];
    if (cublas.status_name) return cublas.status_name((unsigned)rc);
    snprintf(s, sizeof s, "cuBLAS status %d", rc);
    return s;
}

/* cublasGemmEx once against the CPU for each type (64 x 16 x 32, real values), so that a
 * wrong declaration or type shows as a mismatch, not as a fast nonsense timing. */
static void check_gemm(int type)
{
    enum { M = 64, N = 16, K = 32 };
    float a[M * K], b[K * N];
    unsigned char ha[M * K * 4], hb[K * N * 4], hc[M * N * 4];
    for (int i = 0; i < M * K; i++)
        store(ha, (size_t)i, a[i] = rounded(value((unsigned)i, 11), TYPES[type].rounding), type);
    for (int i = 0; i < K * N; i++)
        store(hb, (size_t)i, b[i] = rounded(value((unsigned)i, 12), TYPES[type].rounding), type);
    Gemm g = {.type = type, .m = M, .n = N, .k = K};
    GemmCall x = {.g = &g};
    CHECK_CUDA(cudaMalloc(&x.a, sizeof ha));
    CHECK_CUDA(cudaMalloc(&x.b, sizeof hb));
    CHECK_CUDA(cudaMalloc(&x.c, sizeof hc));
    CHECK_CUDA(cudaMemcpy(x.a, ha, (size_t)M * K * TYPES[type].bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(x.b, hb, (size_t)K * N * TYPES[type].bytes, cudaMemcpyHostToDevice));
    const char *stage;
    int rc = call_gemm(&x, &stage);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (rc)
        snprintf(gemm_check[type], sizeof gemm_check[type], "cublasGemmEx: %s", blas_status(rc));
    else {
        CHECK_CUDA(cudaMemcpy(hc, x.c, (size_t)M * N * TYPES[type].bytes, cudaMemcpyDeviceToHost));
        double err = 0, scale = 0;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < M; i++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += (double)a[k * M + i] * b[j * K + k];
                err = fmax(err, fabs(load(hc, (size_t)j * M + i, type) - s));
                scale = fmax(scale, fabs(s));
            }
        err /= scale;
        int ok = err <= TYPES[type].tol;
        snprintf(gemm_check[type], sizeof gemm_check[type], "%s: error %.2e (tolerance %.0e)",
                 ok ? "ok" : "MISMATCH", err, TYPES[type].tol);
        if (!ok) {
            fprintf(stderr, "MISMATCH: cublasGemmEx %s differs from the CPU (%.2e)\n",
                    TYPES[type].name, err);
            any_mismatch = 1;
        }
    }
    cudaFree(x.a), cudaFree(x.b), cudaFree(x.c);
}

static int open_blas(void)
{
    static int tried, ok;
    if (tried) return ok;
    tried = 1;
    if (!open_cublas()) {
        copy(gemm_problem, sizeof gemm_problem, cublas_problem);
        return 0;
    }
    int rc = (int)cublas.create(&blas);
    if (!rc) rc = (int)cublas.set_stream(blas, stream);
    if (rc) {
        snprintf(gemm_problem, sizeof gemm_problem, "cublasCreate: %s", blas_status(rc));
        return 0;
    }
    for (int t = 0; t < NTYPES; t++)
        if (opt.types >> t & 1) check_gemm(t);
    return ok = 1;
}

/* Time one GEMM; filled with a byte pattern (about 0.01 in float and bfloat16, 1.06 in half):
 * neither zero nor subnormal. */
static void time_gemm(Gemm *g)
{
    if (!open_blas()) {
        copy(g->status, sizeof g->status, gemm_problem);
        return;
    }
    size_t e = (size_t)TYPES[g->type].bytes;
    GemmCall x = {.g = g};
    CHECK_CUDA(cudaMalloc(&x.a, e * g->m * g->k));
    CHECK_CUDA(cudaMalloc(&x.b, e * g->k * g->n));
    CHECK_CUDA(cudaMalloc(&x.c, e * g->m * g->n));
    CHECK_CUDA(cudaMemset(x.a, 0x3c, e * g->m * g->k));
    CHECK_CUDA(cudaMemset(x.b, 0x3c, e * g->k * g->n));
    const char *stage;
    Spread host;
    int calls, rc = measure(call_gemm, &x, &stage, &g->us, &host, &calls);
    if (rc) snprintf(g->status, sizeof g->status, "%s: %s", stage, blas_status(rc));
    else {
        g->done = 1;
        g->tflops = 2.0 * g->m * g->n * (double)g->k / (g->us.median * 1e-6) / 1e12;
    }
    cudaFree(x.a), cudaFree(x.b), cudaFree(x.c);
}

/* --- one RNN configuration: every mode of one cell, algorithm, type and size --- */

typedef struct {
    cudnnHandle_t handle;
    cudnnDropoutDescriptor_t dropout;
    cudnnRNNDescriptor_t rnn;
    cudnnRNNDataDescriptor_t x_check, y_check, x_time, y_time;
    cudnnTensorDescriptor_t h_desc, m_desc, b_desc;
    int32_t *len_check, *len_time;
    size_t weight_bytes, work_bytes, reserve_bytes;
    void *w, *dw, *work, *reserve, *x, *y, *dx, *dy;
    void *h0, *c0, *hT, *cT, *dh0, *dc0, *dhT, *dcT;
    int mode, timed, lstm;
} Rnn;

static cudnnHandle_t handle;
static cudnnDropoutDescriptor_t dropout;

static int call_rnn(void *ctx, const char **stage)
{
    Rnn *r = ctx;
    cudnnRNNDataDescriptor_t xd = r->timed ? r->x_time : r->x_check,
            yd = r->timed ? r->y_time : r->y_check;
    const int32_t *len = r->timed ? r->len_time : r->len_check;
    int train = r->mode == TRAINING;
    cudnnStatus_t st;
    *stage = "cudnnRNNForward";
    st = cudnnRNNForward(handle, r->rnn, train ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                         len, xd, r->x, yd, r->y, r->h_desc, r->h0, r->hT, r->h_desc,
                         r->lstm ? r->c0 : NULL, r->lstm ? r->cT : NULL, r->weight_bytes, r->w,
                         r->work_bytes, r->work, train ? r->reserve_bytes : 0,
                                 train ? r->reserve : NULL);
    if (st || !train) return (int)st;
    *stage = "cudnnRNNBackwardData_v8";
    st = cudnnRNNBackwardData_v8(handle, r->rnn, len, yd, r->y, r->dy, xd, r->dx, r->h_desc, r->h0,
                                 r->dhT, r->dh0, r->h_desc, r->lstm ? r->c0 : NULL,
                                 r->lstm ? r->dcT : NULL, r->lstm ? r->dc0 : NULL, r->weight_bytes,
                                 r->w, r->work_bytes, r->work, r->reserve_bytes, r->reserve);
    if (st) return (int)st;
    /* CUDNN_WGRAD_MODE_ADD adds into the gradient space: zero it first. */
    CHECK_CUDA(cudaMemsetAsync(r->dw, 0, r->weight_bytes, stream));
    *stage = "cudnnRNNBackwardWeights_v8";
    return (int)cudnnRNNBackwardWeights_v8(handle, r->rnn, CUDNN_WGRAD_MODE_ADD, len, xd, r->x,
                                           r->h_desc, r->h0, yd, r->y, r->weight_bytes, r->dw,
                                           r->work_bytes, r->work, r->reserve_bytes, r->reserve);
}

static void refuse(Cell *c, int n, const char *stage, int status)
{
    char last[320] = "";
    if (!opt.dry_run) cudnnGetLastErrorString(last, sizeof last);
    else snprintf(last, sizeof last, "dry run: a pretended refusal");
    for (int i = 0; i < n; i++) {
        c[i].state = REFUSED, c[i].stage = stage, c[i].status = status;
        copy(c[i].message, sizeof c[i].message, last);
    }
}

/* Where weight matrix or bias `id` lives in the weight space, as cuDNN says: offset in
 * elements, and row and column strides. The gradient space has the same layout. */
typedef struct { size_t base; int row, col, rows, cols; } Slot;

static cudnnStatus_t slot(Rnn *r, int id, Slot *m, Slot *bias, int H)
{
    void *ma = NULL, *ba = NULL;
    cudnnStatus_t st = cudnnGetRNNWeightParams(handle, r->rnn, 0, r->weight_bytes, r->w, id,
                                               r->m_desc, &ma, r->b_desc, &ba);
    if (st) return st;
    cudnnTensorDescriptor_t descs[2] = {r->m_desc, r->b_desc};
    void *addrs[2] = {ma, ba};
    Slot *slots[2] = {m, bias};
    for (int i = 0; i < 2; i++) {
        cudnnDataType_t type;
        int nb = 0, dims[3], strides[3];
        CHECK_CUDNN(cudnnGetTensorNdDescriptor(descs[i], 3, &type, &nb, dims, strides));
        int elem = type == CUDNN_DATA_FLOAT ? 4 : 2, cols = i ? 1 : H;
        if (nb != 3 || dims[1] != H || dims[2] != cols || !addrs[i]) {
            fprintf(stderr, "cudnnGetRNNWeightParams: unexpected shape [%d, %d, %d] for id %d\n",
                    dims[0], dims[1], dims[2], id);
            exit(1);
        }
        *slots[i] = (Slot){(size_t)((char *)addrs[i] - (char *)r->w) / (size_t)elem, strides[1],
                           strides[2], H, cols};
    }
    return CUDNN_STATUS_SUCCESS;
}

static size_t at(Slot s, int row, int col)
{
    return s.base + (size_t)row * s.row + (size_t)col * s.col;
}

/* The largest |got - want| over the largest |want|. */
static double compare(const double *got, const double *want, size_t n)
{
    double err = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(got[i] - want[i]);
        err = !(d <= err) ? d : err; /* NaN propagates as a failure */
        scale = fmax(scale, fabs(want[i]));
    }
    return err / fmax(scale, 1e-30);
}

typedef struct { const char *name; double *got, *want; size_t n; } Check;

/* Run the configuration at check_steps steps and compare with the reference; returns 0 or a
 * status (with *stage), and fills c->error, c->worst. */
static int check_cell(Rnn *r, Cell *c, const Ref *ref, Slot *ms, Slot *bs)
{
    const int H = c->hidden, B = c->batch, T = opt.check_steps, G = CELLS[c->cell].gates;
    const int rows = checked_rows(B), type = c->type;
    const size_t BH = (size_t)B * H, TBH = (size_t)T * BH, GHH = (size_t)G * H * H,
            GH = (size_t)G * H;
    const char *stage = "";
    r->timed = 0;
    int rc = call_rnn(r, &stage);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    if (rc) {
        refuse(c, 1, stage, rc);
        return rc;
    }
    size_t e = (size_t)TYPES[type].bytes;
    size_t room = (size_t)(T + 2) * rows * H + TBH + 2 * BH + 2 * GHH + 2 * GH;
    unsigned char *host = zalloc(e * TBH);
    double *got = zalloc(sizeof(double) * room), *want = zalloc(sizeof(double) * room);
    Check checks[10];
    int n = 0;
    size_t used = 0;
    /* Outputs: the checked rows only. */
    struct { const char *name; void *dev; int steps; const double *ref; } outs[] = {
        {"y", r->y, T, ref->y}, {"hT", r->hT, 1, ref->hT}, {"cT", r->cT, 1, ref->cT},
        {"dx", r->dx, T, ref->dx}, {"dh0", r->dh0, 1, ref->dh0}, {"dc0", r->dc0, 1, ref->dc0}};
    for (int o = 0; o < 6; o++) {
        if ((!r->lstm && (o == 2 || o == 5)) || (o >= 3 && c->mode != TRAINING)) continue;
        CHECK_CUDA(cudaMemcpy(host, outs[o].dev, e * outs[o].steps * BH, cudaMemcpyDeviceToHost));
        /* outputs: the checked rows; gradients: every row, zero outside the checked ones */
        int every = o >= 3, nb = every ? B : rows;
        Check k = {outs[o].name, got + used, want + used, (size_t)outs[o].steps * nb * H};
        for (int t = 0; t < outs[o].steps; t++)
            for (int i = 0; i < nb; i++) {
                int b = every ? i : (i == 0 ? 0 : B - 1), d = data_row(b, B);
                for (int j = 0; j < H; j++) {
                    size_t to = ((size_t)t * nb + i) * H + j;
                    k.got[to] = load(host, ((size_t)t * B + b) * H + j, type);
                    k.want[to] = d < rows ? outs[o].ref[((size_t)t * ref->rows + d) * H + j] : 0.0;
                }
            }
        checks[n++] = k;
        used += k.n;
    }
    if (c->mode == TRAINING) { /* gradients of the weights, read where each weight lives */
        unsigned char *image = zalloc(r->weight_bytes);
        CHECK_CUDA(cudaMemcpy(image, r->dw, r->weight_bytes, cudaMemcpyDeviceToHost));
        static const char *names[] = {"dW", "dR", "dbW", "dbR"};
        for (int part = 0; part < 4; part++) {
            const double *src = part == 0 ? ref->dW : part == 1 ? ref->dR
                              : part == 2 ? ref->dbW : ref->dbR;
            int cols = part < 2 ? H : 1;
            Check k = {names[part], got + used, want + used, part < 2 ? GHH : GH};
            for (int g = 0; g < G; g++) {
                int id = g + (part % 2) * G;
                for (int j = 0; j < H; j++)
                    for (int col = 0; col < cols; col++) {
                        size_t i = ((size_t)g * H + j) * cols + col;
                        k.got[i] = load(image, at(part < 2 ? ms[id] : bs[id], j, col), type);
                        k.want[i] = src[i];
                    }
            }
            checks[n++] = k;
            used += k.n;
        }
        free(image);
    }
    c->error = 0;
    for (int i = 0; i < n; i++) {
        double err = compare(checks[i].got, checks[i].want, checks[i].n);
        if (!(err <= c->error)) c->error = err, copy(c->worst, sizeof c->worst, checks[i].name);
    }
    free(host), free(got), free(want);
    return 0;
}

static void free_rnn(Rnn *r)
{
    void *bufs[] = {r->w, r->dw, r->work, r->reserve, r->x, r->y, r->dx, r->dy, r->h0, r->c0,
                    r->hT, r->cT, r->dh0, r->dc0, r->dhT, r->dcT, r->len_check, r->len_time};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) cudaFree(bufs[i]);
    cudnnDestroyRNNDataDescriptor(r->x_check), cudnnDestroyRNNDataDescriptor(r->y_check);
    cudnnDestroyRNNDataDescriptor(r->x_time), cudnnDestroyRNNDataDescriptor(r->y_time);
    cudnnDestroyTensorDescriptor(r->h_desc), cudnnDestroyTensorDescriptor(r->m_desc);
    cudnnDestroyTensorDescriptor(r->b_desc);
    cudnnDestroyRNNDescriptor(r->rnn);
}

/* Upload the check's data (its first `block` bytes) and repeat them to fill `total` bytes. */
static void upload(void *dev, const void *host, size_t block, size_t total)
{
    CHECK_CUDA(cudaMemcpy(dev, host, block, cudaMemcpyHostToDevice));
    for (size_t at = block; at < total; at += block)
        CHECK_CUDA(cudaMemcpy((char *)dev + at, dev, total - at < block ? total - at : block,
                              cudaMemcpyDeviceToDevice));
}

static void run_config(Cell *c, int n)
{
    const int H = c->hidden, B = c->batch, G = CELLS[c->cell].gates, type = c->type;
    const int Tc = opt.check_steps, T = opt.steps;
    const TypeInfo *ty = &TYPES[type];
    const size_t e = (size_t)ty->bytes, BH = (size_t)B * H;
    Rnn r = {.lstm = c->cell == LSTM};
    cudnnStatus_t st;
    CHECK_CUDNN(cudnnCreateRNNDescriptor(&r.rnn));
    CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&r.x_check));
    CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&r.y_check));
    CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&r.x_time));
    CHECK_CUDNN(cudnnCreateRNNDataDescriptor(&r.y_time));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&r.h_desc));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&r.m_desc));
    CHECK_CUDNN(cudnnCreateTensorDescriptor(&r.b_desc));
    st = cudnnSetRNNDescriptor_v8(r.rnn, ALGOS[c->algo].algo, CELLS[c->cell].mode,
                                  CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                                  ty->data, ty->prec, ty->math, H, H, H, 1, dropout,
                                  CUDNN_RNN_PADDED_IO_DISABLED);
    if (st) { refuse(c, n, "cudnnSetRNNDescriptor_v8", st); goto done; }
    if (c->algo == PERSIST_DYNAMIC) { /* compiles the persistent kernel for this batch (NVRTC) */
        double t0 = real_now();
        st = cudnnBuildRNNDynamic(handle, r.rnn, B);
        for (int i = 0; i < n; i++) c[i].build_ms = 1e3 * (real_now() - t0);
        if (st) { refuse(c, n, "cudnnBuildRNNDynamic", st); goto done; }
    }
    st = cudnnGetRNNWeightSpaceSize(handle, r.rnn, &r.weight_bytes);
    if (st) { refuse(c, n, "cudnnGetRNNWeightSpaceSize", st); goto done; }
    int *lengths = zalloc(sizeof(int) * (size_t)B * 2), *lengths_time = lengths + B;
    for (int b = 0; b < B; b++) lengths[b] = Tc, lengths_time[b] = T;
    st = cudnnSetRNNDataDescriptor(r.x_check, ty->data, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, Tc,
                                   B, H, lengths, NULL);
    if (!st)
        st = cudnnSetRNNDataDescriptor(r.y_check, ty->data, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                       Tc, B, H, lengths, NULL);
    if (!st)
        st = cudnnSetRNNDataDescriptor(r.x_time, ty->data, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                       T, B, H, lengths_time, NULL);
    if (!st)
        st = cudnnSetRNNDataDescriptor(r.y_time, ty->data, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED,
                                       T, B, H, lengths_time, NULL);
    int hdims[3] = {1, B, H}, hstrides[3] = {B * H, H, 1};
    if (!st) st = cudnnSetTensorNdDescriptor(r.h_desc, ty->data, 3, hdims, hstrides);
    if (st) { free(lengths); refuse(c, n, "cudnnSetRNNDataDescriptor", st); goto done; }
    CHECK_CUDA(cudaMalloc((void **)&r.len_check, sizeof(int32_t) * B));
    CHECK_CUDA(cudaMalloc((void **)&r.len_time, sizeof(int32_t) * B));
    CHECK_CUDA(cudaMemcpy(r.len_check, lengths, sizeof(int32_t) * B, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(r.len_time, lengths_time, sizeof(int32_t) * B, cudaMemcpyHostToDevice));
    free(lengths);
    for (int i = 0; i < n; i++) c[i].weight_bytes = r.weight_bytes;

    /* Device memory: the sequences hold the timed steps; the check uses the first ones. */
    void **seqs[] = {&r.x, &r.y, &r.dx, &r.dy};
    for (int i = 0; i < 4; i++) CHECK_CUDA(cudaMalloc(seqs[i], e * T * BH));
    void **states[] = {&r.h0, &r.c0, &r.hT, &r.cT, &r.dh0, &r.dc0, &r.dhT, &r.dcT};
    for (int i = 0; i < 8; i++) CHECK_CUDA(cudaMalloc(states[i], e * BH));
    CHECK_CUDA(cudaMalloc(&r.w, r.weight_bytes));
    CHECK_CUDA(cudaMalloc(&r.dw, r.weight_bytes));

    /* Weights: each matrix and bias where cuDNN says it lives. */
    const Ref *ref = ref_for(c->cell, H, ty->rounding);
    Slot ms[8], bs[8];
    unsigned char *image = zalloc(r.weight_bytes);
    for (int id = 0; id < 2 * G; id++) {
        st = slot(&r, id, &ms[id], &bs[id], H);
        if (st) { free(image); refuse(c, n, "cudnnGetRNNWeightParams", st); goto done; }
        const float *m = id < G ? ref->W : ref->R, *bias = id < G ? ref->bW : ref->bR;
        int g = id % G;
        for (int j = 0; j < H; j++) {
            for (int k = 0; k < H; k++)
                store(image, at(ms[id], j, k), m[((size_t)g * H + j) * H + k], type);
            store(image, at(bs[id], j, 0), bias[(size_t)g * H + j], type);
        }
    }
    CHECK_CUDA(cudaMemcpy(r.w, image, r.weight_bytes, cudaMemcpyHostToDevice));
    free(image);

    /* Inputs, initial states and incoming gradients as the reference had them. */
    const int rows = checked_rows(B), rnd = ty->rounding;
    unsigned char *hx = zalloc(e * Tc * BH), *hdy = zalloc(e * Tc * BH);
    unsigned char *hs[4] = {zalloc(e * BH), zalloc(e * BH), zalloc(e * BH), zalloc(e * BH)};
    for (int b = 0; b < B; b++) {
        int d = data_row(b, B), checked = d < rows;
        for (int j = 0; j < H; j++) {
            size_t i = (size_t)b * H + j;
            store(hs[0], i, rounded(state_value(6, d, j, H), rnd), type);
            store(hs[1], i, rounded(state_value(7, d, j, H), rnd), type);
            store(hs[2], i, checked ? rounded(state_value(9, d, j, H), rnd) : 0.0f, type);
            store(hs[3], i, checked ? rounded(state_value(10, d, j, H), rnd) : 0.0f, type);
            for (int t = 0; t < Tc; t++) {
                size_t k = ((size_t)t * B + b) * H + j;
                store(hx, k, rounded(x_value(t, d, j, H), rnd), type);
                store(hdy, k, checked ? rounded(dy_value(t, d, j, H), rnd) : 0.0f, type);
            }
        }
    }
    upload(r.x, hx, e * Tc * BH, e * T * BH);
    upload(r.dy, hdy, e * Tc * BH, e * T * BH);
    upload(r.h0, hs[0], e * BH, e * BH), upload(r.c0, hs[1], e * BH, e * BH);
    upload(r.dhT, hs[2], e * BH, e * BH), upload(r.dcT, hs[3], e * BH, e * BH);
    free(hx), free(hdy);
    for (int i = 0; i < 4; i++) free(hs[i]);

    for (int i = 0; i < n; i++) {
        Cell *m = &c[i];
        cudnnForwardMode_t fwd = m->mode == TRAINING ? CUDNN_FWD_MODE_TRAINING
                                                     : CUDNN_FWD_MODE_INFERENCE;
        size_t w1 = 0, r1 = 0, w2 = 0, r2 = 0;
        st = cudnnGetRNNTempSpaceSizes(handle, r.rnn, fwd, r.x_check, &w1, &r1);
        if (!st) st = cudnnGetRNNTempSpaceSizes(handle, r.rnn, fwd, r.x_time, &w2, &r2);
        if (st) { refuse(m, 1, "cudnnGetRNNTempSpaceSizes", st); continue; }
        r.work_bytes = w1 > w2 ? w1 : w2, r.reserve_bytes = r1 > r2 ? r1 : r2;
        m->work_bytes = w2, m->reserve_bytes = r2;
        r.work = r.reserve = NULL;
        if (r.work_bytes) CHECK_CUDA(cudaMalloc(&r.work, r.work_bytes));
        if (r.reserve_bytes) CHECK_CUDA(cudaMalloc(&r.reserve, r.reserve_bytes));
        r.mode = m->mode;
        if (check_cell(&r, m, ref, ms, bs) == 0) {
            if (!(m->error <= ty->tol)) {
                m->state = MISMATCH, any_mismatch = 1;
                fprintf(stderr,
                        "MISMATCH: %s %s %s %s H %d B %d: %s differs from the CPU reference "
                        "by %.2e (tolerance %.0e)\n", CELLS[m->cell].name, MODES[m->mode], ty->name,
                        ALGOS[m->algo].name, H, B, m->worst, m->error, ty->tol);
            } else {
                const char *stage = "";
                r.timed = 1;
                int rc = measure(call_rnn, &r, &stage, &m->us_step, &m->host_us_call, &m->calls);
                if (rc) refuse(m, 1, stage, rc);
                else {
                    for (int s = 0; s < m->us_step.n; s++) m->us_step.v[s] /= T;
                    summarise(&m->us_step);
                    m->tflops = flops(m) / (m->us_step.median * T * 1e-6) / 1e12;
                    m->state = OK;
                }
            }
        }
        cudaFree(r.work), cudaFree(r.reserve);
        r.work = r.reserve = NULL;
        /* A refusal must leave the device usable; an error that does not ends the run. */
        CHECK_CUDA(cudaStreamSynchronize(stream));
        CHECK_CUDA(cudaGetLastError());
    }
done:
    free_rnn(&r);
}

/* ---------------------------------------------------------------------------------------- */
/* The dry run: the same plan, budget and files, the GPU pretended                           */
/* ---------------------------------------------------------------------------------------- */

/* What the dry run pretends cuDNN refuses (documented for the tests, which check the records):
 *   PERSIST_STATIC_SMALL_H, hidden > 128: cudnnRNNForward, CUDNN_STATUS_NOT_SUPPORTED
 *   PERSIST_STATIC in BF16: cudnnSetRNNDescriptor_v8, CUDNN_STATUS_BAD_PARAM
 *   PERSIST_DYNAMIC, batch > 128: cudnnBuildRNNDynamic, CUDNN_STATUS_NOT_SUPPORTED
 *   GRU training with PERSIST_STATIC: cudnnRNNBackwardData_v8, CUDNN_STATUS_NOT_SUPPORTED
 * and it pretends a time per step of a latency (20 us STANDARD, 3 us the persistent ones) plus
 * the FLOPs at 20 (FP32), 100 (TF32) or 200 (FP16, BF16) TFLOP/s. */
static void pretend_config(Cell *c, int n)
{
    double spent = 0.05;
    if (c->algo == PERSIST_STATIC && c->type == BF16)
        refuse(c, n, "cudnnSetRNNDescriptor_v8", CUDNN_STATUS_BAD_PARAM);
    else if (c->algo == PERSIST_DYNAMIC && c->batch > 128)
        refuse(c, n, "cudnnBuildRNNDynamic", CUDNN_STATUS_NOT_SUPPORTED);
    else if (c->algo == PERSIST_STATIC_SMALL_H && c->hidden > 128)
        refuse(c, n, "cudnnRNNForward", CUDNN_STATUS_NOT_SUPPORTED);
    for (int i = 0; i < n; i++) {
        Cell *m = &c[i];
        if (m->algo == PERSIST_DYNAMIC) m->build_ms = 1000;
        if (m->state == REFUSED) continue;
        if (m->cell == GRU && m->mode == TRAINING && m->algo == PERSIST_STATIC) {
            refuse(m, 1, "cudnnRNNBackwardData_v8", CUDNN_STATUS_NOT_SUPPORTED);
            continue;
        }
        double rate = m->type == FP32 ? 20e12 : m->type == TF32 ? 100e12 : 200e12;
        double step_us = (m->algo == STANDARD ? 20 : 3) * (m->mode == TRAINING ? 3 : 1)
                       + 1e6 * flops(m) / opt.steps / rate;
        m->us_step.n = m->host_us_call.n = opt.samples;
        for (int s = 0; s < opt.samples; s++) {
            m->us_step.v[s] = step_us * (1 + 0.01 * (s - opt.samples / 2));
            m->host_us_call.v[s] = 5.0 * (m->algo == STANDARD ? opt.steps : 1);
        }
        summarise(&m->us_step), summarise(&m->host_us_call);
        m->calls = (int)ceil(opt.sample_s / (step_us * opt.steps * 1e-6));
        m->tflops = flops(m) / (m->us_step.median * opt.steps * 1e-6) / 1e12;
        m->error = TYPES[m->type].tol / 10, snprintf(m->worst, sizeof m->worst, "y");
        m->weight_bytes = (size_t)TYPES[m->type].bytes * 2 * CELLS[m->cell].gates * m->hidden
                        * (m->hidden + 1);
        m->state = OK;
        spent += opt.warmup_s + opt.samples * fmax(opt.sample_s, step_us * opt.steps * 1e-6);
    }
    if (c->algo == PERSIST_DYNAMIC && c->state != REFUSED) spent += 1.0;
    virtual_elapsed += spent;
}

static void pretend_floors(void)
{
    const double us[NFLOORS] = {2.0, 6.0, 1.0};
    for (int f = 0; f < NFLOORS; f++) {
        floors[f].us.n = opt.samples;
        for (int s = 0; s < opt.samples; s++) floors[f].us.v[s] = us[f] * (1 + 0.01 * s);
        summarise(&floors[f].us);
        floors[f].done = 1;
    }
    barrier_blocks = 132;
    virtual_elapsed += 1.0;
}

static void pretend_gemm(Gemm *g)
{
    double rate = g->type == FP32 ? 50e12 : g->type == TF32 ? 300e12 : 600e12;
    double us = 4 + 1e6 * 2.0 * g->m * g->n * (double)g->k / rate;
    g->us.n = opt.samples;
    for (int s = 0; s < opt.samples; s++) g->us.v[s] = us * (1 + 0.01 * s);
    summarise(&g->us);
    g->tflops = 2.0 * g->m * g->n * (double)g->k / (g->us.median * 1e-6) / 1e12;
    g->done = 1;
    virtual_elapsed += opt.warmup_s + opt.samples * fmax(opt.sample_s, us * 1e-6);
}

/* On the CPU, what can be checked of what the GPU run needs: NVRTC compiles the floors'
 * kernels, cuBLAS opens with every function this program calls. */
static void dry_run_checks(Buf *report)
{
    char *what = kernels_image_kind, *why = kernels_problem;
    char *image = compile_kernels(90, what, sizeof kernels_image_kind, why, sizeof kernels_problem);
    if (image) why[0] = 0;
    int major = 0, minor = 0;
    if (nvrtc.lib)
        nvrtc.version(&major, &minor), machine.nvrtc[0] = major, machine.nvrtc[1] = minor;
    put(report, "{\"nvrtc\": "), put_str(report, nvrtc.lib ? nvrtc.file : nvrtc_problem);
    put(report, ", \"kernels\": "), put_str(report, image ? what : why);
    put(report, ", \"cublas\": "), put_str(report, open_cublas() ? cublas.file : cublas_problem);
    if (cublas.lib) {
        cublas.get_property(MAJOR_VERSION, &machine.cublas[0]);
        cublas.get_property(MINOR_VERSION, &machine.cublas[1]);
        cublas.get_property(PATCH_LEVEL, &machine.cublas[2]);
    }
    put(report, "}");
    printf("dry run: NVRTC %s: kernels %s; cuBLAS %s\n", nvrtc.lib ? nvrtc.file : nvrtc_problem,
           image ? what : why, cublas.lib ? cublas.file : cublas_problem);
    free(image);
}

/* ---------------------------------------------------------------------------------------- */
/* The run                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void print_cells(const Cell *c, int n)
{
    printf("  %-4s %-4s %-22s", CELLS[c->cell].name, TYPES[c->type].name, ALGOS[c->algo].name);
    for (int i = 0; i < n; i++) {
        const Cell *m = &c[i];
        printf(" | %s ", MODES[m->mode]);
        if (m->state == OK)
            printf("%.2f us/step (%.2f-%.2f) %.2f TFLOP/s", m->us_step.median, m->us_step.q1,
                   m->us_step.q3, m->tflops);
        else if (m->state == REFUSED)
            printf("refused by %s: %s", m->stage, cudnnGetErrorString((cudnnStatus_t)m->status));
        else if (m->state == MISMATCH)
            printf("MISMATCH %s %.2e", m->worst, m->error);
        else printf("%s", STATES[m->state]);
    }
    printf("\n");
    fflush(stdout);
}

static void add_gemm(int type, int gates, int hidden, int batch)
{
    Gemm *g = &gemms[ngemms++];
    *g = (Gemm){.type = type, .gates = gates, .hidden = hidden, .batch = batch};
    g->m = gates ? gates * hidden : LARGE_GEMM, g->n = gates ? batch : LARGE_GEMM,
            g->k = gates ? hidden : LARGE_GEMM;
    if (opt.dry_run) pretend_gemm(g);
    else time_gemm(g);
}

static void run_floors(int arch)
{
    printf("floors of this GPU:\n");
    if (opt.dry_run) pretend_floors();
    else measure_kernel_floors(arch);
    for (int f = 0; f < NFLOORS; f++) {
        if (floors[f].done)
            printf("  %-32s %8.2f us (%.2f-%.2f)\n", floors[f].name, floors[f].us.median,
                   floors[f].us.q1, floors[f].us.q3);
        else printf("  %-32s not measured: %s\n", floors[f].name, floors[f].status);
    }
    for (int t = 0; t < NTYPES; t++)
        if (opt.types >> t & 1) add_gemm(t, 0, 0, 0);
    printf("  cuBLAS %d^3:", LARGE_GEMM);
    for (int i = 0; i < ngemms; i++)
        if (gemms[i].done) printf(" %s %.1f TFLOP/s", TYPES[gemms[i].type].name, gemms[i].tflops);
        else printf(" %s not measured (%s)", TYPES[gemms[i].type].name, gemms[i].status);
    printf("\n");
    for (int t = 0; t < NTYPES; t++)
        if (gemm_check[t][0])
            printf("  cublasGemmEx %s against the CPU: %s\n", TYPES[t].name, gemm_check[t]);
}

static void run_block(int k)
{
    Block *b = &blocks[k];
    double t0 = now(), end = deadline - 3;
    b->state = BLOCK_DONE;
    printf("size: hidden %d, batch %d, %d steps (estimate %.1f s, %.0f s left)\n", b->hidden,
           b->batch, opt.steps, b->estimate, deadline - now());
    if (opt.floors) {
        int first = ngemms;
        for (int gates = 4; gates >= 3; gates--)
            for (int t = 0; t < NTYPES; t++)
                if ((opt.types >> t & 1) && (opt.cells >> (gates == 4 ? LSTM : GRU) & 1))
                    add_gemm(t, gates, b->hidden, b->batch);
        printf("  cuBLAS GEMM of one step (B x H by H x G*H):");
        for (int i = first; i < ngemms; i++)
            if (gemms[i].done)
                printf(" %s G=%d %.2f us", TYPES[gemms[i].type].name, gemms[i].gates,
                       gemms[i].us.median);
        printf("\n");
    }
    for (int i = b->first; i < b->first + b->count;) {
        int n = config_size(i, b->first + b->count);
        Cell *c = &cells[i];
        double estimate = estimate_config(c, n), start = now();
        if (start + estimate > end) { /* the rest of this size does not fit: left out */
            for (int j = i; j < b->first + b->count; j++) cells[j].state = LEFT_OUT;
            b->state = BLOCK_PARTIAL;
            printf("  the rest of this size left out: %.1f s estimated, %.1f s left\n", estimate,
                   end - start);
            break;
        }
        if (opt.dry_run) pretend_config(c, n);
        else run_config(c, n);
        for (int j = 0; j < n; j++) c[j].seconds = now() - start;
        learn(c, n, now() - start, estimate);
        print_cells(c, n);
        i += n;
    }
    b->seconds = now() - t0;
}

static void run(int arch)
{
    int done = 0;
    if (opt.floors) {
        if (now() + 10 < deadline) run_floors(arch);
        else printf("floors left out: less than 10 s left\n");
    }
    write_results();
    for (int k = 0; k < nblocks; k++) {
        Block *b = &blocks[k];
        b->estimate = estimate_block(b);
        if (k > 0 && now() + b->estimate > deadline - 3) { /* the centre is always tried */
            b->state = BLOCK_LEFT_OUT;
            for (int i = b->first; i < b->first + b->count; i++) cells[i].state = LEFT_OUT;
            continue;
        }
        run_block(k);
        write_results();
        if (opt.dry_run && opt.stop_after_blocks && ++done == opt.stop_after_blocks) {
            printf("stopped after %d sizes (--stop-after-blocks): a run cut short\n", done);
            fflush(stdout);
            _Exit(3);
        }
    }
    int counts[5] = {0}, left = 0;
    for (int i = 0; i < ncells; i++) counts[cells[i].state]++;
    for (int k = 0; k < nblocks; k++)
        if (blocks[k].state == BLOCK_LEFT_OUT || blocks[k].state == BLOCK_PARTIAL) {
            if (!left++) printf("left out (time budget):");
            printf(" hidden %d batch %d%s;", blocks[k].hidden, blocks[k].batch,
                   blocks[k].state == BLOCK_PARTIAL ? " (partly)" : "");
        }
    if (left) printf("\n");
    write_results();
    printf("wrote rnn_limits.json and rnn_limits_floors.json: %d cells, %d ok, %d refused, %d "
           "mismatched, %d left out, in %.1f s\n", ncells, counts[OK], counts[REFUSED],
           counts[MISMATCH], counts[LEFT_OUT], now() - started_at);
}

/* ---------------------------------------------------------------------------------------- */
/* Options                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: rnn_limits [options]\n"
        "  --steps N             time steps (default 64; input size = hidden size)\n"
        "  --hidden LIST         hidden sizes, e.g. 128,256,512,1024 (the default)\n"
        "  --batch LIST          batches, e.g. 32,64,128,256 (the default)\n"
        "  --cell LIST           LSTM,GRU\n"
        "  --algo LIST           STANDARD,PERSIST_STATIC,PERSIST_STATIC_SMALL_H,PERSIST_DYNAMIC\n"
        "  --type LIST           FP32,TF32,FP16,BF16\n"
        "  --mode LIST           inference,training\n"
        "  --no-floors           skip the floors (launch, barrier, cuBLAS)\n"
        "  --seconds S           time budget without BENCH_DEADLINE (default 420)\n"
        "  --samples N           samples per cell, 5 to 16 (default 7)\n"
        "  --sample-ms MS        the least time of one sample (default 5)\n"
        "  --warmup-ms MS        warm-up time per cell (default 30)\n"
        "  --stop-after-blocks N with BENCH_CPU_DRY_RUN=1: exit after N sizes (a run cut short)\n"
        "  --cpu-reference CELL H B T TYPE   print the CPU reference's data and results\n");
}

static int number(const char *s, double lo, double hi, const char *what)
{
    char *end;
    double v = strtod(s, &end);
    if (*end || v < lo || v > hi || v != floor(v)) {
        fprintf(stderr, "%s: %s is not a whole number from %g to %g\n", what, s, lo, hi);
        exit(2);
    }
    return (int)v;
}

static int list_of_numbers(const char *s, int *out, const char *what)
{
    char words[256];
    int n = 0;
    copy(words, sizeof words, s);
    for (char *w = strtok(words, ","); w; w = strtok(NULL, ",")) {
        if (n == MAX_SIZES) { fprintf(stderr, "%s: at most %d values\n", what,
                                      MAX_SIZES); exit(2); }
        out[n++] = number(w, 1, 8192, what);
    }
    if (!n) { fprintf(stderr, "%s: no value\n", what); exit(2); }
    return n;
}

static unsigned list_of_names(const char *s, const char *const *names, int count, const char *what)
{
    char words[256];
    unsigned mask = 0;
    copy(words, sizeof words, s);
    for (char *w = strtok(words, ","); w; w = strtok(NULL, ",")) {
        int i = 0;
        while (i < count && strcasecmp(w, names[i])) i++;
        if (i == count) { fprintf(stderr, "%s: unknown %s\n", what, w); exit(2); }
        mask |= 1u << i;
    }
    if (!mask) { fprintf(stderr, "%s: no value\n", what); exit(2); }
    return mask;
}

static int index_of(const char *s, const char *const *names, int count, const char *what)
{
    unsigned mask = list_of_names(s, names, count, what);
    for (int i = 0; i < count; i++)
        if (mask == 1u << i) return i;
    fprintf(stderr, "%s: one value\n", what);
    exit(2);
}

static void parse(int argc, char **argv)
{
    const char *cell_names[NCELLS], *algo_names[NALGOS], *type_names[NTYPES];
    for (int i = 0; i < NCELLS; i++) cell_names[i] = CELLS[i].name;
    for (int i = 0; i < NALGOS; i++) algo_names[i] = ALGOS[i].name;
    for (int i = 0; i < NTYPES; i++) type_names[i] = TYPES[i].name;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "--help")) { usage(stdout); exit(0); }
        else if (!strcmp(a, "--no-floors")) opt.floors = 0, takes = 0;
        else if (!strcmp(a, "--cpu-reference")) {
            if (argc - i < 6) { usage(stderr); exit(2); }
            int cell = index_of(argv[i + 1], cell_names, NCELLS, a);
            int H = number(argv[i + 2], 1, 1024, "H"), B = number(argv[i + 3], 1, 256, "B");
            int T = number(argv[i + 4], 1, 64, "T"), type = index_of(argv[i + 5], type_names,
                                                                     NTYPES, a);
            exit(print_reference(cell, H, B, T, type));
        }
        else if (!v) { usage(stderr); exit(2); }
        else if (!strcmp(a, "--steps")) opt.steps = number(v, 1, 4096, a);
        else if (!strcmp(a, "--hidden")) opt.nh = list_of_numbers(v, opt.hidden, a);
        else if (!strcmp(a, "--batch")) opt.nb = list_of_numbers(v, opt.batch, a);
        else if (!strcmp(a, "--cell")) opt.cells = list_of_names(v, cell_names, NCELLS, a);
        else if (!strcmp(a, "--algo")) opt.algos = list_of_names(v, algo_names, NALGOS, a);
        else if (!strcmp(a, "--type")) opt.types = list_of_names(v, type_names, NTYPES, a);
        else if (!strcmp(a, "--mode")) opt.modes = list_of_names(v, MODES, NMODES, a);
        else if (!strcmp(a, "--seconds")) opt.seconds = number(v, 1, 86400, a);
        else if (!strcmp(a, "--samples")) opt.samples = number(v, 5, MAX_SAMPLES, a);
        else if (!strcmp(a, "--sample-ms")) opt.sample_s = 1e-3 * number(v, 1, 10000, a);
        else if (!strcmp(a, "--warmup-ms")) opt.warmup_s = 1e-3 * number(v, 1, 10000, a);
        else if (!strcmp(a, "--stop-after-blocks")) opt.stop_after_blocks = number(v, 1, 64, a);
        else { fprintf(stderr, "unknown option %s\n", a); usage(stderr); exit(2); }
        i += takes;
    }
}

int main(int argc, char **argv)
{
    const char *dry = getenv("BENCH_CPU_DRY_RUN");
    opt.dry_run = dry && !strcmp(dry, "1");
    parse(argc, argv);
    if (opt.check_steps > opt.steps) opt.check_steps = opt.steps;
    if (!opt.dry_run) require_gpu(); /* "needs a GPU: ..." and exit 77 without a CUDA device */

    read_machine();
    started_at = real_now();
    virtual_start = started_at;
    const char *until = getenv("BENCH_DEADLINE");
    deadline = until && *until ? strtod(until, NULL) : started_at + opt.seconds;
    make_plan();
    int arch = 90;
    if (opt.dry_run) {
        printf("DRY RUN on the CPU (BENCH_CPU_DRY_RUN=1): checks the plan, the budget, the "
               "libraries and the files; measures nothing about a GPU; its files are marked "
               "dry_run and no chart draws them.\n");
        Buf report = {0};
        dry_run_checks(&report);
        free(report.p);
    } else {
        struct cudaDeviceProp prop;
        CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
        copy(machine.gpu, sizeof machine.gpu, prop.name);
        machine.memory = prop.totalGlobalMem;
        int major = 0, minor = 0;
        CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
        CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
        CHECK_CUDA(cudaDeviceGetAttribute(&machine.sms, cudaDevAttrMultiProcessorCount, 0));
        snprintf(machine.cc, sizeof machine.cc, "%d.%d", major, minor);
        arch = 10 * major + minor;
        CHECK_CUDA(cudaRuntimeGetVersion(&machine.cuda_runtime));
        CHECK_CUDA(cudaDriverGetVersion(&machine.cuda_driver));
        CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CHECK_CUDA(cudaEventCreate(&ev_start));
        CHECK_CUDA(cudaEventCreate(&ev_end));
        CHECK_CUDNN(cudnnCreate(&handle));
        CHECK_CUDNN(cudnnSetStream(handle, stream));
        CHECK_CUDNN(cudnnCreateDropoutDescriptor(&dropout));
        CHECK_CUDNN(cudnnSetDropoutDescriptor(dropout, handle, 0.0f, NULL, 0, 0));
        if (open_cublas()) {
            cublas.get_property(MAJOR_VERSION, &machine.cublas[0]);
            cublas.get_property(MINOR_VERSION, &machine.cublas[1]);
            cublas.get_property(PATCH_LEVEL, &machine.cublas[2]);
        }
        if (open_nvrtc()) nvrtc.version(&machine.nvrtc[0], &machine.nvrtc[1]);
        size_t v = cudnnGetVersion();
        printf("rnn_limits: %s (compute capability %s, %d SMs), cuDNN %zu.%zu.%zu, CUDA runtime "
               "%d.%d, driver %s (CUDA %d.%d)\n", machine.gpu, machine.cc, machine.sms, v / 10000,
               v / 100 % 100, v % 100, machine.cuda_runtime / 1000,
                       machine.cuda_runtime % 1000 / 10,
               machine.driver[0] ? machine.driver : "?", machine.cuda_driver / 1000,
               machine.cuda_driver % 1000 / 10);
    }
    printf("plan: %d sizes x %d cells each, %d steps; %.0f s until the deadline (%s)\n", nblocks,
           nblocks ? blocks[0].count : 0, opt.steps, deadline - started_at,
           until && *until ? "BENCH_DEADLINE" : "--seconds");
    fflush(stdout);
    run(arch);
    if (any_mismatch) {
        fprintf(stderr, "MISMATCH: some results differ from the CPU reference (listed above; "
                "status \"mismatch\" in rnn_limits.json)\n");
        if (!(until && *until)) return 1; /* a budgeted run keeps them: the record says so */
    }
    if (!opt.dry_run) {
        if (blas) cublas.destroy(blas);
        cudnnDestroyDropoutDescriptor(dropout);
        CHECK_CUDNN(cudnnDestroy(handle));
    }
    return 0;
}
// --8<-- [end:file]
