/*
 * layer.h — one layer of a Network: shape inference, parameter layout, forward and backward.
 *
 * A layer does not own its parameters: the Network carves every layer's weights, gradients and
 * running statistics out of three flat buffers (so the optimizer is one launch and a checkpoint one
 * write) and hands each layer pointers into them with bind(). A layer owns only what is private to
 * one forward/backward pair (a dropout mask, batch-norm's saved statistics), allocated once there
 * for the largest batch. Shape errors are thrown as sweep::Error with the bare reason; the Network
 * prefixes the layer's position and type (LayerError, which also keeps the position as numbers, so
 * that a config check can point at the layer's line).
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/check.h"
#include "trainer/backend/backend.h"
#include "trainer/shape.h"
#include "trainer/train_config.h"

namespace sweep::trainer {

// One row of Network::summary() for a part inside a layer (a residual block's layers and its
// shortcut), `depth` levels in.
struct LayerPart {
  int depth = 1;
  std::string text;
  Shape out;
  std::size_t params = 0;
};

// A problem of one layer of a model. what() is the message with every level's prefix ("model
// layer 4 of 9 (residual): block layer 2 of 5 (conv): kernel 5x5 is larger than its input 3x3");
// path() is the layer's 0-based index at each level, outermost first ({3, 1}).
class LayerError : public Error {
 public:
  // `problem`, thrown by the layer at `index` of its list, under `prefix` ("model layer 4 of 9
  // (residual): "). A LayerError from inside that layer (a block's own layer) keeps its path below.
  static LayerError in_layer(std::size_t index, const std::string& prefix, const Error& problem);
  const std::vector<std::size_t>& path() const { return path_; }

 private:
  LayerError(const std::string& what, std::vector<std::size_t> path)
      : Error(what), path_(std::move(path)) {}
  std::vector<std::size_t> path_;
};

class Layer {
 public:
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  virtual LayerKind kind() const = 0;
  std::string type() const { return std::string(name_of(kind())); }  // conv, batchnorm, ...
  virtual std::string describe() const;  // type and arguments, for summary(): "conv 20@5x5 s1"
  virtual std::vector<LayerPart> parts() const { return {}; }  // summary() rows inside it
  // Whether this layer is, or holds, a layer of `kind` (dropout inside a residual block).
  virtual bool contains(LayerKind kind) const { return this->kind() == kind; }

  // Works out the output shape for input `in` (per sample) and how many parameters and state
  // values this layer needs. Throws sweep::Error when the shape is impossible.
  virtual Shape setup(Shape in) = 0;
  std::size_t param_count() const { return param_count_; }
  std::size_t state_count() const { return state_count_; }
  Shape out_shape() const { return out_; }

  // Points the layer at its slices of the Network's flat buffers; allocates the layer's own
  // scratch for `max_batch` samples. Called once, after setup.
  virtual void bind(Backend& backend, float* params, float* grads, float* state, int max_batch);
  // Writes the initial parameters and state (PyTorch defaults) into host arrays laid out like this
  // layer's slices, drawing from `rng` in a fixed order (weights, then bias).
  virtual void init(std::mt19937_64& rng, float* host_params, float* host_state) const {}

  // Output aliases the input (flatten): the Network then gives it no buffer of its own and never
  // calls forward/backward.
  virtual bool is_view() const { return false; }
  // backward always writes dx (the backend op has no "skip"), so the Network must give it a
  // buffer even where nothing upstream needs the gradient.
  virtual bool always_writes_dx() const { return false; }
  // Random stream for this forward (dropout): masks come from hash2(seed, counter + i).
  virtual void set_random(std::uint64_t seed, std::uint64_t counter) {}

  // What this layer can do with channels-last activations on `backend` (Backend::nhwc_storage),
  // for the network's storage plan (storage_plan.h): nothing (fp32 NCHW in and out, the default);
  // `passthrough`: either storage in, the same out (batch norm, ReLU, 2x2 max pooling);
  // `reads`: either in, fp32 out (global average pooling); `writes`: fp32 in, either out (a
  // convolution of 8k filters on 1 or 3 channels); `reads_writes`: either in, either out (a
  // convolution with 8k channels and filters).
  virtual NhwcRole nhwc_role(const Backend& backend) const {
    (void)backend;
    return NhwcRole::none;
  }
  // The storage of the layer's input (and dx) and output (and dy), as planned; before bind.
  virtual void set_storage(Storage in, Storage out) {
    in_storage_ = in;
    out_storage_ = out;
  }
  Storage in_storage() const { return in_storage_; }
  Storage out_storage() const { return out_storage_; }

  // x (batch, in), y (batch, out). training selects batch statistics and dropout. Each pointer
  // holds its tensor in the planned storage: fp32 NCHW, or channels-last in bf16 or fp32 (typed
  // float* whichever it holds). A layer whose role is none only ever sees fp32 NCHW.
  virtual void forward(const float* x, float* y, int batch, bool training) = 0;
  // Given dy, writes dx (skipped when null: nothing before this layer needs it) and OVERWRITES this
  // layer's parameter gradients. x and y are the last forward's input and output.
  virtual void backward(const float* x, const float* y, const float* dy, float* dx, int batch) = 0;

 protected:
  Layer() = default;
  Backend* backend_ = nullptr;
  float* params_ = nullptr;
  float* grads_ = nullptr;
  float* state_ = nullptr;
  Shape in_, out_;
  std::size_t param_count_ = 0, state_count_ = 0;
  Storage in_storage_ = Storage::fp32_nchw, out_storage_ = Storage::fp32_nchw;
};

// Uniform in [-bound, bound) from the top 24 bits of one draw: the same numbers on every standard
// library (std::uniform_real_distribution is implementation-defined).
float uniform_symmetric(std::mt19937_64& rng, float bound);

}  // namespace sweep::trainer
