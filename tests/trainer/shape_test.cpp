/*
 * shape_test.cpp — a sample's shape (shape.h): its size and its text.
 */
#include "trainer/shape.h"

#include <gtest/gtest.h>

namespace sweep::trainer {
namespace {

TEST(Shape, SizeAndText) {
  EXPECT_EQ((Shape{20, 24, 24}).numel(), 20 * 24 * 24);
  EXPECT_EQ(shape_text(Shape{20, 24, 24}), "20x24x24");
  EXPECT_EQ(shape_text(Shape{500, 1, 1}), "500");
  EXPECT_EQ(Shape{}, (Shape{1, 1, 1}));
}

}  // namespace
}  // namespace sweep::trainer
