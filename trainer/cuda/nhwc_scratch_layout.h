/*
 * nhwc_scratch_layout.h — where consecutive arrays start in one channels-last scratch buffer
 * (CudaBackend::nhwc_scratch), shared by the dense and convolution ops that lay out their
 * converted operands in it.
 *
 * Each array starts on a 256-byte boundary (bf16; 512 for fp32): padded(n) elements, n rounded up
 * to kNhwcAlign, so vectorised loads and cuDNN's and cuBLAS' alignment needs hold for every array.
 */
#pragma once

#include <cstddef>

namespace sweep::trainer::cuda {

constexpr std::size_t kNhwcAlign = 128;
inline std::size_t padded(std::size_t n) { return (n + kNhwcAlign - 1) / kNhwcAlign * kNhwcAlign; }

}  // namespace sweep::trainer::cuda
