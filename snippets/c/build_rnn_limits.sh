CUDNN=$(python3 -c "import nvidia.cudnn as m; print(m.__path__[0])") &&
CUDART=$(python3 -c "import nvidia.cuda_runtime as m; print(m.__path__[0])") &&
NVCC=$(python3 -c "import nvidia.cuda_nvcc as m; print(m.__path__[0])") &&
CUBLAS=$(python3 -c "import nvidia.cublas as m; print(m.__path__[0])") &&
NVRTC=$(python3 -c "import nvidia.cuda_nvrtc as m; print(m.__path__[0])") &&
gcc -std=c11 -O2 -Wall -Wextra -Werror rnn_limits.c -o rnn_limits \
    -I"$CUDNN/include" -I"$CUDART/include" -I"$NVCC/include" \
    -L"$CUDNN/lib" -L"$CUDART/lib" \
    -Wl,--disable-new-dtags -Wl,-rpath,"$CUDNN/lib:$CUDART/lib:$CUBLAS/lib:$NVRTC/lib" \
    -l:libcudnn.so.9 -l:libcudart.so.12 -lm &&
./rnn_limits
