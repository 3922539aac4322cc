/*
 * onnx_export.h — a model file as an ONNX model (opset 17, the IR version of Debian's libonnx).
 *
 * The graph's input "input" is float32 (N, C, H, W) with N dynamic, holding the raw values a user
 * has: an image's pixels 0..255 as floats, a CSV row's features as written. The model's scaling
 * and normalisation are folded into one Mul and one Add at the front (x * scale / std - mean /
 * std, per channel), so nothing is done to an input before it is fed.
 *
 * Every engine layer maps to one ONNX operator: conv → Conv (pads, strides; bias when it has
 * one), batchnorm → BatchNormalization in inference form (the running statistics), relu → Relu,
 * maxpool → MaxPool (padding never wins a max, as the engine's), avgpool → AveragePool with
 * count_include_pad = 1 (the engine divides by the whole window), both with ceil_mode 0 (the
 * engine's floor), gap → GlobalAveragePool, dense → Flatten + Gemm (transB = 1), dropout → nothing
 * (inference), flatten → Flatten, residual → the body, the projection shortcut (Conv 1x1 +
 * BatchNormalization) where it has one, Add, then Relu when the block has it.
 *
 * The output "output" is (N, classes) class probabilities (a Softmax after the last layer: what
 * `sweep predict` prints, unlike PyTorch's export of logits) for classification, (N, 1) the value
 * for regression. metadata_props: class_names (a JSON list, empty when the classes are numbers),
 * task, sweep, trial, output_network.
 */
#pragma once

#include <string>

#include "trainer/model_file.h"

namespace sweep::trainer {

inline constexpr int kOnnxOpset = 17;

// The serialised ModelProto, already passed through onnx::checker::check_model. Throws
// sweep::Error naming `name` (the model file) for a model that cannot be exported.
std::string onnx_model_bytes(const ModelFile& m, const std::string& name);

}  // namespace sweep::trainer
