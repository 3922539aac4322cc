/*
 * network.h — a sequence of layers over one backend, with every parameter in one allocation.
 *
 * All trainable parameters are carved out of one flat buffer (and their gradients out of a second
 * of the same layout), so the optimizer is one launch over a flat array and a checkpoint is one
 * write. Non-trainable state (batch-norm running statistics) sits in a third flat buffer.
 * Activations are allocated once for `max_batch`; forward/backward never allocate.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trainer/backend/backend.h"
#include "trainer/shape.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

class Layer;  // trainer/layers/layer.h

// The network's outputs for data of `classes` classes: one logit per class, or one value for a
// regression set (classes == 0).
inline int output_units(int classes) { return classes > 0 ? classes : 1; }

class Network {
 public:
  // Builds the layers of `model` (preset or list) for inputs of shape `input`, ending in `classes`
  // logits (one output for regression, classes == 0); initialises weights as PyTorch does
  // (Kaiming-uniform, bias uniform(+-1/sqrt(fan_in))) from `seed`. Throws sweep::Error for
  // impossible shapes (e.g. a kernel larger than its input).
  Network(Backend& backend, const ModelSpec& model, Shape input, int classes, int max_batch,
          std::uint64_t seed);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Logits (batch, classes), on the backend; valid until the next forward.
  const float* forward(const float* x, int batch, bool training);
  // Given dL/dlogits (batch, classes), fills grads() for the last forward's batch.
  void backward(const float* dlogits, int batch);

  float* params() { return params_.f(); }
  float* grads() { return grads_.f(); }
  std::size_t param_count() const { return param_count_; }
  float* state() { return state_.f(); }  // batch-norm running statistics
  std::size_t state_count() const { return state_count_; }

  void set_dropout_seed(std::uint64_t seed) { dropout_seed_ = seed; }
  void set_step(std::uint64_t step) { step_ = step; }  // counter for dropout masks

  int classes() const { return classes_; }  // 0: regression
  int outputs() const { return output_units(classes_); }
  // Unique in the process, never reused: names this network's buffers in a recorded evaluation
  // graph (an address could be reused by a later network with other buffers).
  std::uint64_t id() const { return id_; }
  // One line per layer: type, output shape, parameters; a residual block's layers and shortcut
  // indented under it.
  std::string summary() const;

  // Test access.
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  Backend& backend() { return backend_; }

 private:
  Backend& backend_;
  std::uint64_t id_;
  Shape input_;
  int classes_, max_batch_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<Shape> shapes_;         // shapes_[i] = input of layer i; shapes_.back() = logits
  std::vector<DeviceBuffer> acts_;    // activations, acts_[i] = output of layer i (empty: view)
  std::vector<DeviceBuffer> dacts_;   // gradients w.r.t. activations (empty: alias or unneeded)
  std::vector<const float*> out_;     // output of layer i in the last forward (views alias)
  std::vector<float*> dout_;          // dL/d(output of layer i); null where nothing needs it
  std::vector<char> relu_view_;       // ReLU i's output was written by dense layer i - 1
  std::vector<char> relu_folded_;     // ReLU i's backward is done by dense layer i + 1
  std::vector<char> bn_relu_;         // batch norm i does ReLU i + 1's work, both directions
  std::vector<char> pooled_by_conv_;  // pooling i's forward was done by convolution i - 1
  DeviceBuffer first_dx_;             // dx scratch for a first trainable layer that always
                                      // writes one (batchnorm)
  std::size_t first_trainable_ = 0;   // layers before it need no backward at all
  DeviceBuffer params_, grads_, state_;
  std::size_t param_count_ = 0, state_count_ = 0;
  const float* input_ptr_ = nullptr;
  int last_batch_ = 0;
  std::uint64_t dropout_seed_ = 0, step_ = 0;
};

}  // namespace sweep::trainer
