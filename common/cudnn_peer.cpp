#include "common/cudnn_peer.h"

#include <climits>
#include <cstdint>
#include <mutex>
#include <tuple>
#include <vector>

#ifdef CONVBWD_WITH_CUDA
#include <cuda_runtime_api.h>
#include <cudnn.h>
#endif

namespace convbwd {

#ifdef CONVBWD_WITH_CUDA

namespace {

constexpr size_t kWorkspaceCap = size_t(1) << 30;  // 1 GiB

std::string cuda_msg(const std::string &what, cudaError_t e) {
    return what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
}

std::string cudnn_msg(const std::string &what, cudnnStatus_t s) {
    std::string m = what + ": " + cudnnGetErrorString(s);
    char detail[1024] = {0};
    cudnnGetLastErrorString(detail, sizeof(detail) - 1);
    if (detail[0]) m += " (" + std::string(detail) + ")";
    return m;
}

// One cuDNN handle for the process, created on first use and never destroyed (cuDNN and the
// CUDA runtime may be gone by the time static destructors run). The mutex serializes every use
// of the handle: cudnnSetStream followed by the call it is for.
struct SharedHandle {
    std::mutex mutex;
    bool tried = false;
    cudnnHandle_t handle = nullptr;
    std::string error;
};
SharedHandle &shared_handle() {
    static SharedHandle *h = new SharedHandle;
    return *h;
}
// Returns the handle with the mutex held by `lock`, or nullptr with *error.
cudnnHandle_t acquire_handle(std::unique_lock<std::mutex> &lock, std::string *error) {
    SharedHandle &sh = shared_handle();
    lock = std::unique_lock<std::mutex>(sh.mutex);
    if (!sh.tried) {
        sh.tried = true;
        cudnnStatus_t s = cudnnCreate(&sh.handle);
        if (s != CUDNN_STATUS_SUCCESS) {
            sh.error = cudnn_msg("cudnnCreate", s);
            sh.handle = nullptr;
            cudaGetLastError();
        }
    }
    if (!sh.handle) *error = sh.error;
    return sh.handle;
}

cudnnDataType_t cudnn_type(DType t) {
    return t == DType::F32 ? CUDNN_DATA_FLOAT : t == DType::F16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
}

const char *math_name(cudnnMathType_t m) {
    switch (m) {
    case CUDNN_DEFAULT_MATH: return "default_math";
    case CUDNN_TENSOR_OP_MATH: return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "tensor_op_allow_conversion";
    case CUDNN_FMA_MATH: return "fma";
    default: return "math?";
    }
}

const char *data_algo_name(cudnnConvolutionBwdDataAlgo_t a) {
    switch (a) {
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_0: return "bwd_data_algo_0";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_1: return "bwd_data_algo_1";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT: return "bwd_data_algo_fft";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING: return "bwd_data_algo_fft_tiling";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD: return "bwd_data_algo_winograd";
    case CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED: return "bwd_data_algo_winograd_nonfused";
    default: return "bwd_data_algo_?";
    }
}

const char *filter_algo_name(cudnnConvolutionBwdFilterAlgo_t a) {
    switch (a) {
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0: return "bwd_filter_algo_0";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1: return "bwd_filter_algo_1";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT: return "bwd_filter_algo_fft";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3: return "bwd_filter_algo_3";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED: return "bwd_filter_algo_winograd_nonfused";
    case CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING: return "bwd_filter_algo_fft_tiling";
    default: return "bwd_filter_algo_?";
    }
}

// A cudaMalloc'd block, freed on scope exit.
struct DevMem {
    void *ptr = nullptr;
    ~DevMem() { reset(); }
    void reset() {
        if (ptr && cudaFree(ptr) != cudaSuccess) cudaGetLastError();
        ptr = nullptr;
    }
};

}  // namespace

struct CudnnPeer::Impl {
    ConvProblem p;
    Direction dir = Direction::BwdData;
    bool ok = false;
    std::string why;

    cudnnTensorDescriptor_t x_desc = nullptr, dy_desc = nullptr;
    cudnnFilterDescriptor_t w_desc = nullptr;
    cudnnConvolutionDescriptor_t conv_desc = nullptr;
    cudnnConvolutionBwdDataAlgo_t data_algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
    cudnnConvolutionBwdFilterAlgo_t filter_algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    float find_ms = -1;

    DevMem workspace;
    size_t workspace_bytes = 0;
    void *stream = nullptr;

    ~Impl() {
        if (x_desc) cudnnDestroyTensorDescriptor(x_desc);
        if (dy_desc) cudnnDestroyTensorDescriptor(dy_desc);
        if (w_desc) cudnnDestroyFilterDescriptor(w_desc);
        if (conv_desc) cudnnDestroyConvolutionDescriptor(conv_desc);
    }

    bool fail(const std::string &m) {
        why = m;
        return false;
    }
    bool init();
    bool describe();
    bool find(cudnnHandle_t h);
};

// Problem checks and the four descriptors.
bool CudnnPeer::Impl::describe() {
    const ConvProblem &q = p;
    if (q.N < 1 || q.C < 1 || q.H < 1 || q.W < 1 || q.K < 1 || q.R < 1 || q.S < 1 || q.G < 1)
        return fail("a size (N, C, H, W, K, R, S, G) is < 1");
    if (q.C % q.G || q.K % q.G) return fail("groups G = " + std::to_string(q.G) + " does not divide C and K");
    if (q.stride_h < 1 || q.stride_w < 1 || q.dilation_h < 1 || q.dilation_w < 1)
        return fail("stride and dilation must be >= 1");
    if (q.pad_top < 0 || q.pad_bottom < 0 || q.pad_left < 0 || q.pad_right < 0) return fail("negative padding");
    if (q.P < 1 || q.Q < 1) return fail("the output (P, Q) is empty");
    // cuDNN's legacy API has one pad per dimension (both sides). An asymmetric pair computes
    // the same thing only if pad_end = pad_begin yields the same output size.
    if (q.pad_top != q.pad_bottom &&
        conv_out_size(q.H, q.pad_top, q.pad_top, q.R, q.stride_h, q.dilation_h) != q.P)
        return fail("asymmetric padding (pad_top " + std::to_string(q.pad_top) + " != pad_bottom " +
                    std::to_string(q.pad_bottom) + ") is not expressible in cuDNN's legacy convolution API");
    if (q.pad_left != q.pad_right &&
        conv_out_size(q.W, q.pad_left, q.pad_left, q.S, q.stride_w, q.dilation_w) != q.Q)
        return fail("asymmetric padding (pad_left " + std::to_string(q.pad_left) + " != pad_right " +
                    std::to_string(q.pad_right) + ") is not expressible in cuDNN's legacy convolution API");
    // 4-d descriptors take int sizes and strides.
    const int64_t cg = q.C / q.G;
    const int64_t x_elems = (int64_t)q.N * q.C * q.H * q.W, dy_elems = (int64_t)q.N * q.K * q.P * q.Q,
                  w_elems = (int64_t)q.K * cg * q.R * q.S;
    if (x_elems > INT_MAX || dy_elems > INT_MAX || w_elems > INT_MAX)
        return fail("a tensor has more than INT_MAX elements (cuDNN's 4-d descriptors take int strides)");

    const cudnnDataType_t t = cudnn_type(q.dtype);
    const bool nhwc = q.layout == Layout::NHWC;
    cudnnStatus_t s;
    auto set_act = [&](cudnnTensorDescriptor_t d, int n, int c, int h, int w) {
        // Packed NCHW: (C*H*W, H*W, W, 1). Packed NHWC: (H*W*C, 1, W*C, C).
        return nhwc ? cudnnSetTensor4dDescriptorEx(d, t, n, c, h, w, h * w * c, 1, w * c, c)
                    : cudnnSetTensor4dDescriptorEx(d, t, n, c, h, w, c * h * w, h * w, w, 1);
    };
    if ((s = cudnnCreateTensorDescriptor(&x_desc)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnCreateTensorDescriptor", s));
    if ((s = cudnnCreateTensorDescriptor(&dy_desc)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnCreateTensorDescriptor", s));
    if ((s = cudnnCreateFilterDescriptor(&w_desc)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnCreateFilterDescriptor", s));
    if ((s = cudnnCreateConvolutionDescriptor(&conv_desc)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnCreateConvolutionDescriptor", s));
    if ((s = set_act(x_desc, q.N, q.C, q.H, q.W)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnSetTensor4dDescriptorEx(x)", s));
    if ((s = set_act(dy_desc, q.N, q.K, q.P, q.Q)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnSetTensor4dDescriptorEx(dy)", s));
    // KCYX = cuDNN's NCHW filter format (K, C/G, R, S); KYXC = its NHWC filter format.
    if ((s = cudnnSetFilter4dDescriptor(w_desc, t, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, q.K, (int)cg, q.R,
                                        q.S)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnSetFilter4dDescriptor", s));
    if ((s = cudnnSetConvolution2dDescriptor(conv_desc, q.pad_top, q.pad_left, q.stride_h, q.stride_w, q.dilation_h,
                                             q.dilation_w, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) !=
        CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnSetConvolution2dDescriptor", s));
    if (q.G > 1 && (s = cudnnSetConvolutionGroupCount(conv_desc, q.G)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnSetConvolutionGroupCount", s));
    // f32: FMA only (CUDNN_DEFAULT_MATH would allow TF32 tensor cores). f16 / bf16: tensor cores.
    math = q.dtype == DType::F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
    if ((s = cudnnSetConvolutionMathType(conv_desc, math)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnSetConvolutionMathType", s));

    int on = 0, ok_k = 0, op = 0, oq = 0;
    if ((s = cudnnGetConvolution2dForwardOutputDim(conv_desc, x_desc, w_desc, &on, &ok_k, &op, &oq)) !=
        CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnGetConvolution2dForwardOutputDim", s));
    if (on != q.N || ok_k != q.K || op != q.P || oq != q.Q)
        return fail("cuDNN's output size (" + std::to_string(on) + ", " + std::to_string(ok_k) + ", " +
                    std::to_string(op) + ", " + std::to_string(oq) + ") differs from dy's (" + std::to_string(q.N) +
                    ", " + std::to_string(q.K) + ", " + std::to_string(q.P) + ", " + std::to_string(q.Q) + ")");
    return true;
}

// Runs cudnnFind*AlgorithmEx on zeroed scratch tensors and keeps the fastest algorithm that
// succeeded with a workspace of at most 1 GiB (for f32, none that uses tensor-op math).
bool CudnnPeer::Impl::find(cudnnHandle_t h) {
    const int64_t eb = dtype_bytes(p.dtype), cg = p.C / p.G;
    const size_t x_bytes = (size_t)((int64_t)p.N * p.C * p.H * p.W * eb);
    const size_t dy_bytes = (size_t)((int64_t)p.N * p.K * p.P * p.Q * eb);
    const size_t w_bytes = (size_t)((int64_t)p.K * cg * p.R * p.S * eb);
    DevMem x, dy, w, ws;
    cudaError_t e;
    for (auto [mem, bytes, name] : {std::tuple<DevMem *, size_t, const char *>{&x, x_bytes, "x"},
                                    {&dy, dy_bytes, "dy"},
                                    {&w, w_bytes, "w"}}) {
        if ((e = cudaMalloc(&mem->ptr, bytes)) != cudaSuccess) {
            cudaGetLastError();
            mem->ptr = nullptr;
            return fail(cuda_msg(std::string("cudaMalloc(scratch ") + name + ", " + std::to_string(bytes) + " bytes)", e));
        }
        if ((e = cudaMemset(mem->ptr, 0, bytes)) != cudaSuccess) {
            cudaGetLastError();
            return fail(cuda_msg("cudaMemset(scratch)", e));
        }
    }
    // The largest workspace up to 1 GiB that can be had (halving on failure).
    size_t free_b = 0, total_b = 0, ws_cap = kWorkspaceCap;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess && free_b / 2 < ws_cap) ws_cap = free_b / 2;
    cudaGetLastError();
    while (ws_cap >= (size_t(1) << 20)) {
        if (cudaMalloc(&ws.ptr, ws_cap) == cudaSuccess) break;
        cudaGetLastError();
        ws.ptr = nullptr;
        ws_cap /= 2;
    }
    if (!ws.ptr) ws_cap = 0;

    cudnnStatus_t s;
    int max_count = 0, returned = 0;
    bool found = false;
    size_t chosen_memory = 0;
    // The fastest result that fits the workspace; f32 never takes a tensor-op (TF32) algorithm.
    auto pick = [&](const auto &perf, auto *algo) {
        for (int i = 0; i < returned && !found; i++) {  // sorted fastest first
            const auto &r = perf[i];
            if (r.status != CUDNN_STATUS_SUCCESS || r.memory > ws_cap) continue;
            if (p.dtype == DType::F32 && (r.mathType == CUDNN_TENSOR_OP_MATH ||
                                          r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
                continue;
            found = true;
            *algo = r.algo;
            chosen_memory = r.memory;
            find_ms = r.time;
            if (p.dtype != DType::F32) math = r.mathType;
        }
    };
    if (dir == Direction::BwdData) {
        if ((s = cudnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &max_count)) != CUDNN_STATUS_SUCCESS)
            return fail(cudnn_msg("cudnnGetConvolutionBackwardDataAlgorithmMaxCount", s));
        std::vector<cudnnConvolutionBwdDataAlgoPerf_t> perf(max_count > 0 ? max_count : 1);
        if ((s = cudnnFindConvolutionBackwardDataAlgorithmEx(h, w_desc, w.ptr, dy_desc, dy.ptr, conv_desc, x_desc,
                                                             x.ptr, (int)perf.size(), &returned, perf.data(), ws.ptr,
                                                             ws_cap)) != CUDNN_STATUS_SUCCESS)
            return fail(cudnn_msg("cudnnFindConvolutionBackwardDataAlgorithmEx", s));
        pick(perf, &data_algo);
    } else {
        if ((s = cudnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &max_count)) != CUDNN_STATUS_SUCCESS)
            return fail(cudnn_msg("cudnnGetConvolutionBackwardFilterAlgorithmMaxCount", s));
        std::vector<cudnnConvolutionBwdFilterAlgoPerf_t> perf(max_count > 0 ? max_count : 1);
        if ((s = cudnnFindConvolutionBackwardFilterAlgorithmEx(h, x_desc, x.ptr, dy_desc, dy.ptr, conv_desc, w_desc,
                                                               w.ptr, (int)perf.size(), &returned, perf.data(),
                                                               ws.ptr, ws_cap)) != CUDNN_STATUS_SUCCESS)
            return fail(cudnn_msg("cudnnFindConvolutionBackwardFilterAlgorithmEx", s));
        pick(perf, &filter_algo);
    }
    if ((e = cudaDeviceSynchronize()) != cudaSuccess) {
        cudaGetLastError();
        return fail(cuda_msg("cudaDeviceSynchronize after cudnnFind", e));
    }
    if (!found)
        return fail("cudnnFind returned no algorithm that runs this problem (" + std::to_string(returned) +
                    " tried, workspace cap " + std::to_string(ws_cap) + " bytes)");
    if ((s = cudnnSetConvolutionMathType(conv_desc, math)) != CUDNN_STATUS_SUCCESS)
        return fail(cudnn_msg("cudnnSetConvolutionMathType", s));

    // Free the scratch and the search workspace, then hold exactly what the algorithm needs.
    ws.reset(), x.reset(), dy.reset(), w.reset();
    if (chosen_memory > 0) {
        if ((e = cudaMalloc(&workspace.ptr, chosen_memory)) != cudaSuccess) {
            cudaGetLastError();
            workspace.ptr = nullptr;
            return fail(cuda_msg("cudaMalloc(workspace, " + std::to_string(chosen_memory) + " bytes)", e));
        }
    }
    workspace_bytes = chosen_memory;
    return true;
}

bool CudnnPeer::Impl::init() {
    if (!describe()) return false;  // needs no GPU: problems cuDNN cannot express are refused anywhere
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return fail(cuda_msg("no CUDA device: cudaGetDeviceCount", e));
    }
    if (devices == 0) return fail("no CUDA device");
    std::unique_lock<std::mutex> lock;
    cudnnHandle_t h = acquire_handle(lock, &why);
    if (!h) return false;
    cudnnStatus_t s = cudnnSetStream(h, nullptr);
    if (s != CUDNN_STATUS_SUCCESS) return fail(cudnn_msg("cudnnSetStream", s));
    return find(h);
}

CudnnPeer::CudnnPeer(const ConvProblem &p, Direction dir) : impl_(new Impl) {
    impl_->p = with_derived_output(p);
    impl_->dir = dir;
    impl_->ok = impl_->init();
}

CudnnPeer::~CudnnPeer() = default;

bool CudnnPeer::ok() const { return impl_->ok; }
const std::string &CudnnPeer::why() const { return impl_->why; }
void CudnnPeer::set_stream(void *stream) { impl_->stream = stream; }
size_t CudnnPeer::workspace_bytes() const { return impl_->ok ? impl_->workspace_bytes : 0; }
double CudnnPeer::find_ms() const { return impl_->ok ? impl_->find_ms : -1.0; }

std::string CudnnPeer::algo_name() const {
    if (!impl_->ok) return "";
    return std::string(impl_->dir == Direction::BwdData ? data_algo_name(impl_->data_algo)
                                                        : filter_algo_name(impl_->filter_algo)) +
           " " + math_name(impl_->math);
}

bool CudnnPeer::run(const void *a_dev, const void *b_dev, void *out_dev) {
    Impl &m = *impl_;
    if (!m.ok) return false;
    if (!a_dev || !b_dev || !out_dev) return m.fail("CudnnPeer::run: a null device pointer");
    std::unique_lock<std::mutex> lock;
    std::string err;
    cudnnHandle_t h = acquire_handle(lock, &err);
    if (!h) return m.fail(err);
    cudnnStatus_t s = cudnnSetStream(h, (cudaStream_t)m.stream);
    if (s != CUDNN_STATUS_SUCCESS) return m.fail(cudnn_msg("cudnnSetStream", s));
    const float alpha = 1.0f, beta = 0.0f;  // f32 scaling for every dtype (compute type is f32)
    if (m.dir == Direction::BwdData) {
        s = cudnnConvolutionBackwardData(h, &alpha, m.w_desc, b_dev, m.dy_desc, a_dev, m.conv_desc, m.data_algo,
                                         m.workspace.ptr, m.workspace_bytes, &beta, m.x_desc, out_dev);
        if (s != CUDNN_STATUS_SUCCESS) return m.fail(cudnn_msg("cudnnConvolutionBackwardData", s));
    } else {
        s = cudnnConvolutionBackwardFilter(h, &alpha, m.x_desc, a_dev, m.dy_desc, b_dev, m.conv_desc, m.filter_algo,
                                           m.workspace.ptr, m.workspace_bytes, &beta, m.w_desc, out_dev);
        if (s != CUDNN_STATUS_SUCCESS) return m.fail(cudnn_msg("cudnnConvolutionBackwardFilter", s));
    }
    return true;
}

std::string CudnnPeer::library_version() {
    size_t v = cudnnGetVersion();  // major * 10000 + minor * 100 + patch since cuDNN 9
    return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

#else  // !CONVBWD_WITH_CUDA: a peer that is never ok.

struct CudnnPeer::Impl {
    std::string why = "this build has no CUDA support (CONVBWD_WITH_CUDA)";
};
CudnnPeer::CudnnPeer(const ConvProblem &, Direction) : impl_(new Impl) {}
CudnnPeer::~CudnnPeer() = default;
bool CudnnPeer::ok() const { return false; }
const std::string &CudnnPeer::why() const { return impl_->why; }
void CudnnPeer::set_stream(void *) {}
bool CudnnPeer::run(const void *, const void *, void *) { return false; }
size_t CudnnPeer::workspace_bytes() const { return 0; }
std::string CudnnPeer::algo_name() const { return ""; }
double CudnnPeer::find_ms() const { return -1.0; }
std::string CudnnPeer::library_version() { return ""; }

#endif

}  // namespace convbwd
