/*
 * storage_plan.h — which activations of a list of layers are kept channels-last.
 *
 * On a backend that keeps channels-last activations (Backend::nhwc_storage: bf16 or fp32 NHWC), a
 * tensor between two layers is stored that way when its producer can write it and every layer it
 * flows into can read it; anywhere else fp32 NCHW, so no conversion layer is ever needed. Each
 * layer says what it can do (Layer::nhwc_role): a convolution writes either storage and reads
 * either (one on 1 or 3 channels reads fp32 NCHW only); batch norm, ReLU and 2x2 max pooling pass
 * their input's storage on; global average pooling reads either and writes fp32; every other
 * layer is fp32 NCHW only. A chain of passthrough layers therefore carries the storage its
 * producer chose, and the producer chooses channels-last exactly when the chain ends in a layer
 * that reads it (a convolution, a global average pool) rather than in an fp32 one or in the
 * list's end.
 */
#pragma once

#include <memory>
#include <vector>

#include "trainer/backend/backend.h"

namespace sweep::trainer {

class Layer;

// roles[i]: layer i's role; nhwc: the channels-last storage kept (the backend's nhwc_storage());
// in: the storage of the list's input; out: the storage the list's last output must have (a
// network's logits: fp32; a residual block's F: the sum's). Returns the storage of each layer's
// output. Throws sweep::Error when the roles cannot meet in and out (a list whose channels-last
// input reaches an fp32-only layer: a residual block's role rules this out).
std::vector<Storage> plan_storage(const std::vector<NhwcRole>& roles, Storage nhwc, Storage in,
                                  Storage out);

// plan_storage over `layers`' roles on `backend` (a network's layers, or a residual block's F),
// and each layer's storage set from it (Layer::set_storage). Returns each layer's output storage.
std::vector<Storage> set_layer_storage(const std::vector<std::unique_ptr<Layer>>& layers,
                                       const Backend& backend, Storage in, Storage out);

}  // namespace sweep::trainer
