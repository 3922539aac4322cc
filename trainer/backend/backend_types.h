/*
 * backend_types.h — the values the backend's ops take: storages of activations, the geometry of a
 * convolution, a pooling and a batch norm, one optimizer update, one batch's gather. Shared by the
 * required interface (backend.h) and its optional groups (fused_ops.h, channels_last_ops.h,
 * graph_capture.h), so that each group's header needs none of the others.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "trainer/optimizer_defaults.h"
#include "trainer/vocabulary.h"

namespace sweep::trainer {

enum class DeviceKind { cpu, cuda };

// How an activation tensor is stored between two layers (channels_last_ops.h): fp32 NCHW, or
// channels-last (N, H, W, C) in bf16 or fp32.
enum class Storage { fp32_nchw, bf16_nhwc, fp32_nhwc };
inline bool is_nhwc(Storage s) { return s != Storage::fp32_nchw; }
inline bool is_bf16(Storage s) { return s == Storage::bf16_nhwc; }
// One bfloat16 value as stored: the top 16 bits of an fp32.
struct Bf16 {
  std::uint16_t bits;
};
// Bytes of n values in storage s.
inline std::size_t storage_bytes(Storage s, std::size_t n) {
  return n * (is_bf16(s) ? sizeof(Bf16) : sizeof(float));
}
// What a layer can do with channels-last activations (Layer::nhwc_role).
enum class NhwcRole { none, passthrough, reads, writes, reads_writes };

struct ConvGeom {
  int n, c, h, w;  // input (N, C, H, W)
  int k, r, s;     // filters, kernel height, kernel width: weights (K, C, R, S)
  int stride_h, stride_w;
  int pad_h, pad_w;  // symmetric zero padding
  int out_h, out_w;  // (H + 2*pad_h - R) / stride_h + 1, likewise for W
};

enum class PoolMode { max, average };  // average counts padded zeros (PyTorch's default)

struct PoolGeom {
  int n, c, h, w;
  int kh, kw, stride_h, stride_w, pad_h, pad_w;
  int out_h, out_w;
};

// 2x2 windows, stride 2, no padding: nearly every CNN's pooling, which both backends run on a
// straight-line fast path (same rules, so their results agree bit for bit). The output size is
// checked too: the fast paths index by it, and a geometry that disagrees takes the general path
// (which validates it).
inline bool is_2x2_stride2(const PoolGeom& g) {
  return g.kh == 2 && g.kw == 2 && g.stride_h == 2 && g.stride_w == 2 && g.pad_h == 0 &&
         g.pad_w == 0 && g.out_h == g.h / 2 && g.out_w == g.w / 2;
}

// The 2x2 max pooling of stride 2 over a convolution's output
// (FusedOps::conv2d_forward_maxpool2x2).
inline PoolGeom maxpool2x2_of(const ConvGeom& g) {
  return PoolGeom{g.n, g.k, g.out_h, g.out_w, 2, 2, 2, 2, 0, 0, g.out_h / 2, g.out_w / 2};
}

struct BatchNormGeom {
  int n, c, hw;    // per-channel statistics over N*H*W (dense: hw = 1)
  float eps;       // 1e-5 (PyTorch)
  float momentum;  // running = (1 - momentum) * running + momentum * batch (PyTorch, 0.1);
                   // the running variance uses the unbiased batch variance
};

// One optimizer update over a flat parameter array (all parameters of a network live in one
// allocation, so this is one launch). Semantics are PyTorch's torch.optim with L2 weight decay
// added to the gradient (not AdamW):
//   g = grad * grad_scale + weight_decay * p
//   sgdm:    v = momentum * v + g;  p -= lr * (nesterov ? g + momentum * v : v)          (state1 =
//   v) adam:    m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//            p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)       (state1 = m, state2 =
//            v)
//   rmsprop: s = alpha s + (1-alpha) g^2;  p -= lr * g / (sqrt(s) + eps)                  (state1 =
//   s)
struct OptimizerStep {
  OptimizerKind kind = OptimizerKind::sgdm;
  // The defaults are TrainingSpec's (trainer/optimizer_defaults.h), rounded to float.
  float lr = static_cast<float>(optimizer_defaults::learning_rate);
  float momentum = static_cast<float>(optimizer_defaults::momentum);
  bool nesterov = false;
  float beta1 = static_cast<float>(optimizer_defaults::beta1);
  float beta2 = static_cast<float>(optimizer_defaults::beta2);
  // rmsprop squared-gradient decay
  float alpha = static_cast<float>(optimizer_defaults::rms_decay);
  float eps = static_cast<float>(optimizer_defaults::epsilon);
  float weight_decay = static_cast<float>(optimizer_defaults::weight_decay);
  std::int64_t t = 1;  // 1-based step count (Adam's bias correction)
};

// Gather a mini-batch from a data set held by the backend, (N, C, H, W) uint8 images or float
// features with uint8 labels or float regression targets, normalise each value to
// (raw - center[c]) * scale[c] + shift[c] (three rounded float operations, no fused multiply-add:
// every backend's exact arithmetic; BatchSource makes the factors from the training split's
// statistics, gather_factors in batch_source.h: pixels 0, 1 / (255 std), -mean / std; features
// mean, 1 / std, 0, so that a feature of large mean and small spread keeps its digits) and augment,
// per sample i of the batch drawn from hash(seed, step, i): horizontal flip with probability 1/2
// when `flip`, then a shift by (dy, dx) uniform in [-max_shift, max_shift] with zeros coming in
// after normalisation (covers random translation and random crop with padding); i counts from
// first_sample. max_shift = 0 and flip = false: a plain normalised copy.
struct GatherDesc {
  int batch = 0, c = 0, h = 0, w = 0;
  const std::uint8_t* images = nullptr;   // (N, C, H, W) on the backend, or null when features are
  const float* features = nullptr;        // (N, C, H, W) on the backend, or null when images are
  const std::uint8_t* labels = nullptr;   // (N), or null when targets are
  const float* targets = nullptr;         // (N) regression targets, or null when labels are
  const std::int32_t* indices = nullptr;  // (batch): rows of the data set to take, on the backend
  const float* center = nullptr;          // (C) on the backend, or null: 0 for every channel
  const float* scale = nullptr;           // (C) on the backend
  const float* shift = nullptr;           // (C) on the backend
  bool flip = false;
  int max_shift = 0;
  std::uint64_t seed = 0, step = 0;
  // The position of this gather's first sample in its whole batch: augmentation draws for sample
  // first_sample + i, so a replica gathering its share of a batch draws what one device would.
  int first_sample = 0;
};

}  // namespace sweep::trainer
