CUDNN=$(python3 -c "import nvidia.cudnn as m; print(m.__path__[0])") &&
CUDART=$(python3 -c "import nvidia.cuda_runtime as m; print(m.__path__[0])") &&
NVCC=$(python3 -c "import nvidia.cuda_nvcc as m; print(m.__path__[0])") &&
gcc -std=c11 -O2 -Wall -Wextra -Werror gru_v8.c -o gru_v8 \
    -I"$CUDNN/include" -I"$CUDART/include" -I"$NVCC/include" \
    -L"$CUDNN/lib" -L"$CUDART/lib" \
    -Wl,--disable-new-dtags -Wl,-rpath,"$CUDNN/lib:$CUDART/lib" \
    -l:libcudnn.so.9 -l:libcudart.so.12 -lm &&
./gru_v8
