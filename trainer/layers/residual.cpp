/*
 * residual.cpp — the residual block: shapes and the shortcut's stride, the parameter layout, and
 * the forward / backward plumbing between F, the shortcut and the sum.
 *
 * Backward runs the projection first: its batch norm's dx (the conv's dy) borrows a ping-pong
 * buffer that F's chain has not started using yet, and its conv writes the shortcut's input
 * gradient straight into dx. F's gradient then lands in dx (identity: the shortcut's gradient,
 * d(sum) itself, is added after) or in a ping-pong buffer (projection: added to dx after).
 * A ReLU after a batch norm in F is folded into it (fold_relu_into_batchnorm): a view forward,
 * skipped backward; and the ReLU after the sum runs in the sum's pass (Backend::add_relu).
 */
#include "trainer/layers/residual.h"

#include <algorithm>

#include "common/check.h"
#include "trainer/layers/batchnorm.h"
#include "trainer/layers/storage_plan.h"
#include "trainer/rng.h"

namespace sweep::trainer {

namespace {

// The smallest stride s with (in - 1) / s + 1 == out in both dimensions: a 1x1 convolution of
// stride s maps an in.h x in.w plane onto out.h x out.w. 0 when none does.
int shortcut_stride(Shape in, Shape out) {
  for (int s = 1; s <= std::max(in.h, in.w); ++s)
    if ((in.h - 1) / s + 1 == out.h && (in.w - 1) / s + 1 == out.w) return s;
  return 0;
}

}  // namespace

std::string block_layer_error_prefix(std::size_t index, std::size_t count, std::string_view type) {
  return "block layer " + std::to_string(index + 1) + " of " + std::to_string(count) + " (" +
         std::string(type) + "): ";
}

Residual::Residual(std::vector<std::unique_ptr<Layer>> body, Activation activation)
    : body_(std::move(body)), activation_(activation) {}

Residual::~Residual() = default;

std::string Residual::describe() const {
  return activation_ == Activation::relu ? "residual block, relu after the sum" : "residual block";
}

std::vector<LayerPart> Residual::parts() const {
  std::vector<LayerPart> rows;
  for (std::size_t j = 0; j < body_.size(); ++j) {
    rows.push_back({1, body_[j]->describe(), shapes_[j + 1], body_[j]->param_count()});
    for (LayerPart inner : body_[j]->parts()) {
      inner.depth += 1;
      rows.push_back(std::move(inner));
    }
  }
  if (proj_conv_) {
    rows.push_back({1, "shortcut " + proj_conv_->describe(), out_, proj_conv_->param_count()});
    rows.push_back({1, "shortcut " + proj_bn_->describe(), out_, proj_bn_->param_count()});
  } else {
    rows.push_back({1, "shortcut identity", out_, 0});
  }
  return rows;
}

bool Residual::contains(LayerKind kind) const {
  if (kind == LayerKind::residual) return true;
  for (const auto& layer : body_)
    if (layer->contains(kind)) return true;
  return false;
}

Shape Residual::setup(Shape in) {
  if (body_.empty()) throw Error("a residual block needs at least one layer");
  in_ = in;
  shapes_.assign(1, in);
  param_count_ = state_count_ = 0;
  first_compute_ = body_.size();
  for (std::size_t j = 0; j < body_.size(); ++j) {
    try {
      shapes_.push_back(body_[j]->setup(shapes_.back()));
    } catch (const Error& e) {
      throw LayerError::in_layer(j, block_layer_error_prefix(j, body_.size(), body_[j]->type()), e);
    }
    param_count_ += body_[j]->param_count();
    state_count_ += body_[j]->state_count();
    if (!body_[j]->is_view() && first_compute_ == body_.size()) first_compute_ = j;
  }
  out_ = shapes_.back();
  proj_conv_.reset();
  proj_bn_.reset();
  proj_stride_ = 1;
  if (out_ == in) return out_;

  proj_stride_ = shortcut_stride(in, out_);
  if (proj_stride_ == 0)
    throw Error("its layers turn " + shape_text(in) + " into " + shape_text(out_) +
                ", which no 1x1 shortcut with a stride can match (the layers may keep the "
                "height and width or shrink them by a stride, not grow them)");
  Conv2dOptions o;
  o.filters = out_.c;
  o.kernel = 1;
  o.stride = proj_stride_;
  o.bias = false;  // the batch norm after it has a shift of its own
  proj_conv_ = std::make_unique<Conv2d>(o);
  proj_bn_ = std::make_unique<BatchNorm>();
  proj_bn_->setup(proj_conv_->setup(in));
  param_count_ += proj_conv_->param_count() + proj_bn_->param_count();
  state_count_ += proj_bn_->state_count();
  return out_;
}

// F's output comes from its last convolution when it has one (which writes either storage), else
// from the block's input; the sum needs F's output and the shortcut's in one storage.
NhwcRole Residual::nhwc_role(const Backend& backend) const {
  bool writes = false;
  for (const auto& layer : body_) {
    const NhwcRole role = layer->nhwc_role(backend);
    if (role != NhwcRole::passthrough && role != NhwcRole::reads_writes) return NhwcRole::none;
    writes = writes || role == NhwcRole::reads_writes;
  }
  if (!proj_conv_) return NhwcRole::passthrough;
  if (proj_conv_->nhwc_role(backend) != NhwcRole::reads_writes) return NhwcRole::none;
  return writes ? NhwcRole::reads_writes : NhwcRole::passthrough;
}

void Residual::bind(Backend& backend, float* params, float* grads, float* state, int max_batch) {
  Layer::bind(backend, params, grads, state, max_batch);
  max_batch_ = max_batch;
  const std::vector<Storage> storage = set_layer_storage(body_, backend, in_storage_, out_storage_);
  const auto bytes = [&](Shape s, Storage st) { return storage_bytes(st, numel(s)); };
  std::size_t p = 0, st = 0;
  std::int64_t largest = in_.numel();
  acts_.clear();
  acts_.resize(body_.size());
  outs_.assign(body_.size(), nullptr);
  folded_.assign(body_.size(), 0);
  for (std::size_t j = 0; j + 1 < body_.size(); ++j)
    folded_[j + 1] = fold_relu_into_batchnorm(*body_[j], *body_[j + 1]);
  for (std::size_t j = 0; j < body_.size(); ++j) {
    Layer& layer = *body_[j];
    layer.bind(backend, params + p, grads + p, state + st, max_batch);
    p += layer.param_count();
    st += layer.state_count();
    if (!layer.is_view() && !folded_[j])
      acts_[j] = DeviceBuffer(backend, bytes(shapes_[j + 1], storage[j]));
    largest = std::max(largest, shapes_[j + 1].numel());
  }
  if (proj_conv_) {
    proj_conv_->set_storage(in_storage_, out_storage_);
    proj_bn_->set_storage(out_storage_, out_storage_);
    proj_conv_->bind(backend, params + p, grads + p, state + st, max_batch);
    p += proj_conv_->param_count();
    proj_bn_->bind(backend, params + p, grads + p, state + st, max_batch);
    proj_out_ = DeviceBuffer(backend, bytes(out_, out_storage_));
    shortcut_out_ = DeviceBuffer(backend, bytes(out_, out_storage_));
  }
  if (activation_ == Activation::relu) dsum_ = DeviceBuffer(backend, bytes(out_, out_storage_));
  // In fp32's bytes: the chain carries gradients of either storage.
  const std::size_t chain_bytes = std::size_t(max_batch) * std::size_t(largest) * sizeof(float);
  ping_ = DeviceBuffer(backend, chain_bytes);
  pong_ = DeviceBuffer(backend, chain_bytes);
}

void Residual::init(std::mt19937_64& rng, float* host_params, float* host_state) const {
  std::size_t p = 0, st = 0;
  for (const auto& layer : body_) {
    layer->init(rng, host_params + p, host_state + st);
    p += layer->param_count();
    st += layer->state_count();
  }
  if (proj_conv_) {
    proj_conv_->init(rng, host_params + p, host_state + st);
    p += proj_conv_->param_count();
    proj_bn_->init(rng, host_params + p, host_state + st);
  }
}

void Residual::set_random(std::uint64_t seed, std::uint64_t counter) {
  // The Network passes counter = step * max_batch * (this block's output size): each inner layer
  // gets its own seed and the same step in units of its own output size, so no two layers or
  // steps share a dropout mask.
  const std::uint64_t span = numel(out_);
  const std::uint64_t step = span ? counter / span : 0;
  for (std::size_t j = 0; j < body_.size(); ++j)
    body_[j]->set_random(mix64(seed ^ mix64(j)), step * numel(shapes_[j + 1]));
}

void Residual::forward(const float* x, float* y, int batch, bool training) {
  const float* in = x;
  for (std::size_t j = 0; j < body_.size(); ++j) {
    if (body_[j]->is_view() || folded_[j]) {  // a folded ReLU: the batch norm wrote its output
      outs_[j] = in;
    } else {
      body_[j]->forward(in, acts_[j].f(), batch, training);
      outs_[j] = acts_[j].f();
    }
    in = outs_[j];
  }
  const float* shortcut = x;
  if (proj_conv_) {
    proj_conv_->forward(x, proj_out_.f(), batch, training);
    proj_bn_->forward(proj_out_.f(), shortcut_out_.f(), batch, training);
    shortcut = shortcut_out_.f();
  }
  sum(in, shortcut, y, std::size_t(batch) * std::size_t(out_.numel()), out_storage_,
      activation_ == Activation::relu);
}

void Residual::sum(const float* a, const float* b, float* y, std::size_t n, Storage s, bool relu) {
  if (is_nhwc(s))
    channels_last(*backend_).add_nhwc(s, a, b, y, n, relu);
  else if (relu)
    add_relu(*backend_, a, b, y, n);
  else
    backend_->add(a, b, y, n);
}

void Residual::backward(const float* x, const float* y, const float* dy, float* dx, int batch) {
  const float* dsum = dy;  // d(F(x) + shortcut(x)): what both branches receive
  if (activation_ == Activation::relu) {
    const std::size_t n = std::size_t(batch) * std::size_t(out_.numel());
    if (is_nhwc(out_storage_))
      channels_last(*backend_).relu_backward_nhwc(out_storage_, y, dy, dsum_.f(), n);
    else
      backend_->relu_backward(y, dy, dsum_.f(), n);
    dsum = dsum_.f();
  }
  if (proj_conv_) {
    proj_bn_->backward(proj_out_.f(), shortcut_out_.f(), dsum, ping_.f(), batch);
    proj_conv_->backward(x, proj_out_.f(), ping_.f(), dx, batch);  // dx null: skipped
  }
  // F's chain, last layer first; g is the gradient of the visited layer's output.
  const auto other = [&](const float* g) { return g == ping_.f() ? pong_.f() : ping_.f(); };
  const float* g = dsum;
  for (std::size_t j = body_.size(); j-- > first_compute_;) {
    Layer& layer = *body_[j];
    // A view's input gradient is its output's; a folded ReLU's backward is its batch norm's.
    if (layer.is_view() || folded_[j]) continue;
    float* target = other(g);
    if (j == first_compute_) {  // F's input gradient
      if (!dx)
        target = layer.always_writes_dx() ? target : nullptr;
      else if (!proj_conv_)
        target = dx;
    }
    layer.backward(j ? outs_[j - 1] : x, outs_[j], g, target, batch);
    g = target;
  }
  if (!dx) return;
  const std::size_t n = std::size_t(batch) * std::size_t(in_.numel());
  if (proj_conv_)
    sum(dx, g, dx, n, in_storage_, false);  // the projection's input gradient + F's
  else
    sum(g, dsum, dx, n, in_storage_, false);  // F's (in dx, unless F is all views) + the identity's
}

}  // namespace sweep::trainer
