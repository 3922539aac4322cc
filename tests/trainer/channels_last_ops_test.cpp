/*
 * channels_last_ops_test.cpp — the channels-last group's questions on any backend
 * (channels_last_ops.h): the storage kept, which convolutions read and write channels-last, and
 * the group asked of a backend without it.
 */
#include "trainer/backend/channels_last_ops.h"

#include <gtest/gtest.h>

#include "common/check.h"
#include "required_only_backend.h"
#include "trainer/cpu/cpu_backend.h"

namespace sweep::trainer {
namespace {

ConvGeom conv(int c, int k) { return ConvGeom{2, c, 8, 8, k, 3, 3, 1, 1, 1, 1, 8, 8}; }

TEST(ChannelsLastOps, ABackendWithoutTheGroupKeepsFp32Nchw) {
  testing::RequiredOnlyBackend plain(1);
  EXPECT_EQ(kept_storage(plain), Storage::fp32_nchw);
  EXPECT_FALSE(conv_reads_nhwc(plain, conv(8, 8)));
  EXPECT_FALSE(conv_writes_nhwc(plain, conv(8, 8)));
  EXPECT_THROW(channels_last(plain), Error);
}

TEST(ChannelsLastOps, ConvolutionsReadAndWriteInMultiplesOfEight) {
  CpuBackend cpu(1);
  EXPECT_EQ(kept_storage(cpu), Storage::fp32_nchw);
  EXPECT_FALSE(conv_writes_nhwc(cpu, conv(8, 8)));  // it keeps none
  cpu.set_nhwc_storage(Storage::bf16_nhwc);
  EXPECT_EQ(kept_storage(cpu), Storage::bf16_nhwc);
  EXPECT_EQ(&channels_last(cpu), static_cast<ChannelsLastOps*>(&cpu));
  EXPECT_TRUE(conv_reads_nhwc(cpu, conv(8, 16)));
  EXPECT_TRUE(conv_writes_nhwc(cpu, conv(8, 16)));
  EXPECT_FALSE(conv_reads_nhwc(cpu, conv(3, 16)));  // a first convolution on 3 channels
  EXPECT_TRUE(conv_writes_nhwc(cpu, conv(3, 16)));
  EXPECT_FALSE(conv_writes_nhwc(cpu, conv(8, 10)));
  EXPECT_EQ(cpu.conv_kept_bytes(conv(8, 16), Storage::bf16_nhwc), 0u);  // the reference keeps none
}

}  // namespace
}  // namespace sweep::trainer
