/*
 * conv2d.cpp — convolution layer: shape rules and PyTorch's default initialisation.
 *
 * Initialisation follows torch.nn.Conv2d.reset_parameters: kaiming_uniform(a = sqrt(5)) on the
 * weight, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = C*R*S, and the same bound for
 * the bias.
 */
#include "trainer/layers/conv2d.h"

#include <cmath>

#include "common/check.h"

namespace sweep::trainer {

std::string Conv2d::describe() const {
  std::string d = "conv " + std::to_string(opt_.filters) + "@" + std::to_string(opt_.kernel) + "x" +
                  std::to_string(opt_.kernel);
  if (opt_.stride != 1) d += " stride " + std::to_string(opt_.stride);
  if (opt_.same)
    d += " same";
  else if (opt_.padding)
    d += " pad " + std::to_string(opt_.padding);
  if (!opt_.bias) d += " no-bias";
  return d;
}

Shape Conv2d::setup(Shape in) {
  if (opt_.filters < 1) throw Error("filters must be at least 1");
  if (opt_.kernel < 1) throw Error("kernel must be at least 1");
  if (opt_.stride < 1) throw Error("stride must be at least 1");
  if (opt_.same) {
    if (opt_.stride != 1)
      throw Error("padding 'same' needs stride 1 (got stride " + std::to_string(opt_.stride) +
                  "); give a number for padding instead");
    if (opt_.kernel % 2 == 0)
      throw Error("padding 'same' needs an odd kernel (got " + std::to_string(opt_.kernel) +
                  "); give a number for padding instead");
    pad_ = (opt_.kernel - 1) / 2;
  } else {
    if (opt_.padding < 0) throw Error("padding must be >= 0");
    pad_ = opt_.padding;
  }
  const int ph = in.h + 2 * pad_, pw = in.w + 2 * pad_;
  if (opt_.kernel > ph || opt_.kernel > pw)
    throw Error("kernel " + std::to_string(opt_.kernel) + "x" + std::to_string(opt_.kernel) +
                " is larger than its input " + std::to_string(in.h) + "x" + std::to_string(in.w) +
                (pad_ ? " (padded to " + std::to_string(ph) + "x" + std::to_string(pw) + ")" : ""));
  in_ = in;
  out_ = Shape{opt_.filters, (ph - opt_.kernel) / opt_.stride + 1,
               (pw - opt_.kernel) / opt_.stride + 1};
  param_count_ = std::size_t(opt_.filters) * in.c * opt_.kernel * opt_.kernel +
                 (opt_.bias ? std::size_t(opt_.filters) : 0);
  return out_;
}

void Conv2d::init(std::mt19937_64& rng, float* host_params, float* host_state) const {
  const float bound = 1.f / std::sqrt(static_cast<float>(in_.c * opt_.kernel * opt_.kernel));
  for (std::size_t i = 0; i < param_count_; ++i) host_params[i] = uniform_symmetric(rng, bound);
}

ConvGeom Conv2d::geometry(int batch) const {
  ConvGeom g{};
  g.n = batch;
  g.c = in_.c;
  g.h = in_.h;
  g.w = in_.w;
  g.k = opt_.filters;
  g.r = g.s = opt_.kernel;
  g.stride_h = g.stride_w = opt_.stride;
  g.pad_h = g.pad_w = pad_;
  g.out_h = out_.h;
  g.out_w = out_.w;
  return g;
}

// What the backend offers for the shape.
NhwcRole Conv2d::nhwc_role(const Backend& backend) const {
  const bool reads = conv_reads_nhwc(backend, geometry(1)),
             writes = conv_writes_nhwc(backend, geometry(1));
  return reads && writes ? NhwcRole::reads_writes
         : reads         ? NhwcRole::reads
         : writes        ? NhwcRole::writes
                         : NhwcRole::none;
}

void Conv2d::bind(Backend& backend, float* params, float* grads, float* state, int max_batch) {
  Layer::bind(backend, params, grads, state, max_batch);
  ChannelsLastOps* stored = backend.channels_last_ops();
  const std::size_t kept = stored ? stored->conv_kept_bytes(geometry(max_batch), in_storage_) : 0;
  kept_ = kept ? DeviceBuffer(backend, kept) : DeviceBuffer();
}

bool Conv2d::fuse_maxpool_after(Pool2d& pool, float* pooled) {
  const ConvGeom g = geometry(1);
  if (!backend_->fused_ops() || !pool.pools_2x2_max_fp32() || in_storage_ != Storage::fp32_nchw ||
      out_storage_ != Storage::fp32_nchw || kept_.bytes() || g.out_h < 2 || g.out_w < 2)
    return false;
  pooled_ = pooled;
  argmax_ = pool.keep_argmax_for_conv();
  return true;
}

// A training forward leaves the operands' computing form in kept_ for backward; an inference one
// keeps nothing (a validation pass between a forward and its backward never happens, and need not
// pay for it).
void Conv2d::forward(const float* x, float* y, int batch, bool training) {
  const std::size_t wsize = param_count_ - (opt_.bias ? opt_.filters : 0);
  const float* b = opt_.bias ? params_ + wsize : nullptr;
  // Only a backward reads the pooling's argmax: an inference forward computes none.
  if (pooled_)
    return backend_->fused_ops()->conv2d_forward_maxpool2x2(geometry(batch), x, params_, b, y,
                                                            pooled_, training ? argmax_ : nullptr);
  // Without the channels-last group every activation is fp32 NCHW and nothing is kept.
  ChannelsLastOps* stored = backend_->channels_last_ops();
  if (!stored) return backend_->conv2d_forward(geometry(batch), x, params_, b, y);
  stored->conv2d_forward_stored(geometry(batch), in_storage_, x, params_, b, out_storage_, y,
                                training && kept_.bytes() ? kept_.as<void>() : nullptr);
}

void Conv2d::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  const std::size_t wsize = param_count_ - (opt_.bias ? opt_.filters : 0);
  float* db = opt_.bias ? grads_ + wsize : nullptr;
  ChannelsLastOps* stored = backend_->channels_last_ops();
  if (!stored) return backend_->conv2d_backward(geometry(batch), x, params_, dy, dx, grads_, db);
  stored->conv2d_backward_stored(geometry(batch), in_storage_, x,
                                 kept_.bytes() ? kept_.as<void>() : nullptr, params_, out_storage_,
                                 dy, dx, grads_, db);
}

}  // namespace sweep::trainer
