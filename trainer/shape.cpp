/*
 * shape.cpp — a shape as text (shape.h).
 */
#include "trainer/shape.h"

namespace sweep::trainer {

std::string shape_text(Shape s) {
  if (s.h == 1 && s.w == 1) return std::to_string(s.c);
  return std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w);
}

}  // namespace sweep::trainer
