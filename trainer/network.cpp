/*
 * network.cpp — builds the layers, lays out the flat buffers, runs forward and backward.
 *
 * Buffers are planned once: every non-view layer gets an output buffer for max_batch samples, and
 * a gradient buffer only where some earlier layer has parameters (layers before the first
 * trainable one never run backward, and the first trainable one gets dx = null, so LeNet's first
 * convolution skips its col2im). Views (flatten) alias their input in both directions.
 * A dense layer next to a ReLU runs the ReLU's work too (Dense::fuse_relu_after / fuse_relu_input):
 * dense-then-ReLU writes the ReLU's output in its own pass and the ReLU forwards as a view of it;
 * ReLU-then-dense passes its input gradient back through the ReLU and the ReLU's backward is
 * skipped. The same numbers, two launches fewer per pair on the GPU (LeNet has both). A batch norm
 * before a ReLU takes the ReLU in both directions (BatchNorm::fuse_relu_after): the ReLU is a view
 * of its output, and its backward is skipped, the batch norm reading the ReLU's output gradient
 * (the conv-block net and the ResNets' stems: two passes over an activation fewer each way).
 * A convolution followed by a 2x2 max pooling, both fp32 NCHW, computes the pooling too
 * (Conv2d::fuse_maxpool_after): the pooling's forward is skipped and its backward reads the argmax
 * the convolution kept (LeNet's two pairs: the convolution's output is never written on a GPU).
 * Activations between layers that take channels-last tensors are stored so where the backend
 * keeps them (storage_plan.h: CUDA in bf16 and tf32 mode); the input, the logits and every
 * fp32-only layer's tensors are fp32 NCHW.
 * Dropout streams: layer i draws from hash2(mix64(dropout_seed ^ mix64(i)), step * span + j) where
 * span = max_batch * features, so no two layers or steps share a mask.
 */
#include "trainer/network.h"

#include <atomic>
#include <cstdio>

#include "common/check.h"
#include "trainer/layers/batchnorm.h"
#include "trainer/layers/conv2d.h"
#include "trainer/layers/dense.h"
#include "trainer/layers/layer.h"
#include "trainer/layers/pool.h"
#include "trainer/layers/storage_plan.h"
#include "trainer/models.h"
#include "trainer/rng.h"

namespace sweep::trainer {

namespace {
std::atomic<std::uint64_t> next_network_id{1};
}  // namespace

Network::Network(Backend& backend, const ModelSpec& model, Shape input, int classes, int max_batch,
                 std::uint64_t seed)
    : backend_(backend),
      id_(next_network_id.fetch_add(1)),
      input_(input),
      classes_(classes),
      max_batch_(max_batch) {
  if (max_batch < 1) throw Error("batch size must be at least 1, got " + std::to_string(max_batch));
  layers_ = build_layers(model, classes);
  shapes_ = setup_layers(layers_, input);
  if (shapes_.back().numel() != output_units(classes))
    throw Error("the model ends in " + std::to_string(shapes_.back().numel()) +
                " outputs but the data has " +
                (classes > 0 ? std::to_string(classes) + " classes" : "one regression target"));

  const std::size_t count = layers_.size();
  std::vector<std::size_t> param_offset(count), state_offset(count);
  first_trainable_ = count;
  for (std::size_t i = 0; i < count; ++i) {
    param_offset[i] = param_count_;
    state_offset[i] = state_count_;
    param_count_ += layers_[i]->param_count();
    state_count_ += layers_[i]->state_count();
    if (layers_[i]->param_count() && first_trainable_ == count) first_trainable_ = i;
  }
  params_ = DeviceBuffer(backend_, param_count_ * sizeof(float));
  grads_ = DeviceBuffer(backend_, param_count_ * sizeof(float));
  state_ = DeviceBuffer(backend_, state_count_ * sizeof(float));
  backend_.fill(grads_.f(), param_count_, 0.f);

  // Initial values drawn on the host in layer order, then one copy each.
  std::vector<float> host_params(param_count_), host_state(state_count_);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < count; ++i)
    layers_[i]->init(rng, host_params.data() + param_offset[i],
                     host_state.data() + state_offset[i]);
  backend_.copy_to_device(params_.f(), host_params.data(), param_count_ * sizeof(float));
  backend_.copy_to_device(state_.f(), host_state.data(), state_count_ * sizeof(float));

  relu_view_.assign(count, 0);
  relu_folded_.assign(count, 0);
  bn_relu_.assign(count, 0);
  for (std::size_t i = 0; i + 1 < count; ++i) {
    if (fold_relu_into_batchnorm(*layers_[i], *layers_[i + 1])) relu_view_[i + 1] = bn_relu_[i] = 1;
    auto* dense = dynamic_cast<Dense*>(layers_[i].get());
    auto* next_dense = dynamic_cast<Dense*>(layers_[i + 1].get());
    if (dense && layers_[i + 1]->kind() == LayerKind::relu) {
      dense->fuse_relu_after(true);
      relu_view_[i + 1] = 1;
    }
    // Only a ReLU that runs backward (one with trainable layers before it) has one to fold.
    // Not one a batch norm already took (that one reads the ReLU's output gradient).
    if (next_dense && layers_[i]->kind() == LayerKind::relu && i > first_trainable_ &&
        !bn_relu_[i - 1]) {
      next_dense->fuse_relu_input(true);
      relu_folded_[i] = 1;
    }
  }

  // Which activations are kept channels-last (storage_plan.h); all fp32 NCHW on most backends.
  const std::vector<Storage> storage =
      set_layer_storage(layers_, backend_, Storage::fp32_nchw, Storage::fp32_nchw);

  acts_.resize(count);
  dacts_.resize(count);
  out_.assign(count, nullptr);
  dout_.assign(count, nullptr);
  for (std::size_t i = 0; i < count; ++i) {
    Layer& layer = *layers_[i];
    const std::size_t out_bytes =
        storage_bytes(storage[i], std::size_t(max_batch) * shapes_[i + 1].numel());
    if (!layer.is_view() && !relu_view_[i]) acts_[i] = DeviceBuffer(backend_, out_bytes);
    // dout_[i] is layer i+1's dx: needed when layer i+1 comes after the first trainable layer.
    if (i + 1 < count && i >= first_trainable_) {
      if (layer.is_view()) {
        dout_[i] = dout_[i - 1];  // i > first_trainable_ >= 0: a view has no parameters
      } else if (!bn_relu_[i]) {  // a folded ReLU's dx is never made: its batch norm reads its dy
        dacts_[i] = DeviceBuffer(backend_, out_bytes);
        dout_[i] = dacts_[i].f();
      }
    }
    layer.bind(backend_, params_.f() + param_offset[i], grads_.f() + param_offset[i],
               state_.f() + state_offset[i], max_batch);
  }
  // A convolution followed by a 2x2 max pooling computes the pooling too (Conv2d::
  // fuse_maxpool_after): the pooling's forward is skipped, its backward reads the argmax.
  pooled_by_conv_.assign(count, 0);
  for (std::size_t i = 0; i + 1 < count; ++i) {
    auto* conv = dynamic_cast<Conv2d*>(layers_[i].get());
    auto* pool = dynamic_cast<Pool2d*>(layers_[i + 1].get());
    if (conv && pool && acts_[i + 1] && conv->fuse_maxpool_after(*pool, acts_[i + 1].f()))
      pooled_by_conv_[i + 1] = 1;
  }
  if (first_trainable_ < count && layers_[first_trainable_]->always_writes_dx())
    first_dx_ = DeviceBuffer(
        backend_, storage_bytes(layers_[first_trainable_]->in_storage(),
                                std::size_t(max_batch) * shapes_[first_trainable_].numel()));
}

Network::~Network() = default;

const float* Network::forward(const float* x, int batch, bool training) {
  if (batch < 1 || batch > max_batch_)
    throw Error("forward: batch " + std::to_string(batch) + " is outside [1, " +
                std::to_string(max_batch_) + "] (the network was built for at most " +
                std::to_string(max_batch_) + ")");
  input_ptr_ = x;
  const float* in = x;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    Layer& layer = *layers_[i];
    if (layer.is_view() || relu_view_[i]) {
      out_[i] = in;  // a ReLU view: the dense layer before it wrote its output
    } else if (pooled_by_conv_[i]) {
      out_[i] = acts_[i].f();  // the convolution before it wrote it
    } else {
      const std::uint64_t span = std::uint64_t(max_batch_) * shapes_[i + 1].numel();
      layer.set_random(mix64(dropout_seed_ ^ mix64(i)), step_ * span);
      layer.forward(in, acts_[i].f(), batch, training);
      out_[i] = acts_[i].f();
    }
    in = out_[i];
  }
  last_batch_ = batch;
  return out_.back();
}

void Network::backward(const float* dlogits, int batch) {
  if (!input_ptr_ || batch != last_batch_)
    throw Error("backward: batch " + std::to_string(batch) +
                " does not match the last forward's batch " + std::to_string(last_batch_));
  const std::size_t count = layers_.size();
  for (std::size_t i = count; i-- > first_trainable_;) {
    Layer& layer = *layers_[i];
    if (layer.is_view()) continue;           // its dout_ aliases its input's gradient
    if (relu_folded_[i]) continue;           // the dense layer after it passed dx through it
    if (i > 0 && bn_relu_[i - 1]) continue;  // the batch norm before it takes its backward
    const float* x = i ? out_[i - 1] : input_ptr_;
    // A batch norm with its ReLU folded in reads the ReLU's output gradient.
    const std::size_t above = bn_relu_[i] ? i + 1 : i;
    const float* dy = above + 1 == count ? dlogits : dout_[above];
    // After a folded ReLU, dx is the ReLU's input gradient (i - 1 > first_trainable_).
    const std::size_t below = i > 0 && relu_folded_[i - 1] ? i - 1 : i;
    float* dx = below > first_trainable_ ? dout_[below - 1] : first_dx_.f();
    layer.backward(x, out_[i], dy, dx, batch);
  }
}

std::string Network::summary() const {
  std::string s;
  char line[200];
  std::snprintf(line, sizeof line, "%3s  %-40s %-16s %12s\n", "#", "layer", "output", "params");
  s += line;
  std::snprintf(line, sizeof line, "%3s  %-40s %-16s %12s\n", "", "input",
                shape_text(input_).c_str(), "");
  s += line;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    std::snprintf(line, sizeof line, "%3zu  %-40s %-16s %12zu\n", i + 1,
                  layers_[i]->describe().c_str(), shape_text(shapes_[i + 1]).c_str(),
                  layers_[i]->param_count());
    s += line;
    // A block's own layers and its shortcut, indented under it.
    for (const LayerPart& part : layers_[i]->parts()) {
      const std::string text = std::string(std::size_t(2 * part.depth), ' ') + part.text;
      std::snprintf(line, sizeof line, "%3s  %-40s %-16s %12zu\n", "", text.c_str(),
                    shape_text(part.out).c_str(), part.params);
      s += line;
    }
  }
  std::snprintf(line, sizeof line, "total parameters: %zu (%.2f MB), state values: %zu\n",
                param_count_, double(param_count_) * 4.0 / 1e6, state_count_);
  s += line;
  return s;
}

}  // namespace sweep::trainer
