/*
 * shape.h — the shape of one sample's tensor (channels, height, width; a feature vector is c x 1
 * x 1): what a layer takes and gives, what a data set holds, what a model file records.
 */
#pragma once

#include <cstdint>
#include <string>

namespace sweep::trainer {

struct Shape {
  int c = 1, h = 1, w = 1;  // per sample; the batch dimension is passed separately
  std::int64_t numel() const { return std::int64_t(c) * h * w; }
  bool operator==(const Shape&) const = default;
};

// "20x24x24", or "500" for a feature vector: a shape in summaries and messages.
std::string shape_text(Shape s);

}  // namespace sweep::trainer
