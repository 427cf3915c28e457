#!/bin/sh
# Build version.c and lstm_v8.c by hand with gcc against the pip wheels: what the Makefile does.
# Usage: sh build-by-hand.sh [OUTPUT_DIR]   (with the Python that has the wheels first on PATH)
set -eu
cd "$(dirname "$0")"
OUT=${1:-build}
mkdir -p "$OUT"
# --8<-- [start:show]
CUDNN=$(python -c "import nvidia.cudnn as m; print(list(m.__path__)[0])")
CUDART=$(python -c "import nvidia.cuda_runtime as m; print(list(m.__path__)[0])")
NVCC=$(python -c "import nvidia.cuda_nvcc as m; print(list(m.__path__)[0])")
gcc -std=c11 -Wall -Wextra -Werror version.c -o "$OUT/version" \
    -I"$CUDNN/include" -I"$CUDART/include" -I"$NVCC/include" \
    -L"$CUDNN/lib" -L"$CUDART/lib" \
    -Wl,--disable-new-dtags -Wl,-rpath,"$CUDNN/lib:$CUDART/lib" \
    -l:libcudnn.so.9 -l:libcudart.so.12
gcc -std=c11 -Wall -Wextra -Werror lstm_v8.c -o "$OUT/lstm_v8" \
    -I"$CUDNN/include" -I"$CUDART/include" -I"$NVCC/include" \
    -L"$CUDNN/lib" -L"$CUDART/lib" \
    -Wl,--disable-new-dtags -Wl,-rpath,"$CUDNN/lib:$CUDART/lib" \
    -l:libcudnn.so.9 -l:libcudart.so.12 -lm
# --8<-- [end:show]
