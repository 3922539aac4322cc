/*
 * cuda_data_test.cpp — the CUDA backend's batch gather (cuda_data.cu), bit for bit, against the CPU
 * backend (fixture and tolerances: cuda_ops_fixture.h).
 */
#include <cstring>
#include <vector>

#include "tests/trainer/cuda/cuda_ops_fixture.h"

namespace sweep::trainer::test {
namespace {

TEST_F(CudaOps, GatherBatchMatchesCpuBitForBit) {
  struct Case {
    int n, c, h, w, batch;
    bool flip;
    int shift;
  };
  for (const Case k : {Case{500, 1, 28, 28, 64, false, 0}, Case{500, 1, 28, 28, 64, true, 2},
                       Case{300, 3, 32, 32, 33, true, 4}, Case{50, 2, 5, 7, 1, true, 3}}) {
    const std::string tag = "gather c" + std::to_string(k.c) + " " + std::to_string(k.h) + "x" +
                            std::to_string(k.w) + " flip" + std::to_string(k.flip) + " shift" +
                            std::to_string(k.shift);
    const std::size_t sample = std::size_t(k.c) * k.h * k.w;
    std::vector<std::uint8_t> images(sample * k.n), labels(k.n);
    std::uniform_int_distribution<int> byte(0, 255), cls(0, 9), row(0, k.n - 1);
    for (auto& v : images) v = static_cast<std::uint8_t>(byte(rng));
    for (auto& v : labels) v = static_cast<std::uint8_t>(cls(rng));
    std::vector<std::int32_t> indices(k.batch);
    for (auto& v : indices) v = row(rng);
    auto put = [](Backend& b, DeviceBuffer& buf, const void* src, std::size_t bytes) {
      buf = DeviceBuffer(b, bytes);
      b.copy_to_device(buf.as<void>(), src, bytes);
    };
    DeviceBuffer ic, ig, lc, lg, xc, xg;
    put(*cpu, ic, images.data(), images.size());
    put(*gpu, ig, images.data(), images.size());
    put(*cpu, lc, labels.data(), labels.size());
    put(*gpu, lg, labels.data(), labels.size());
    put(*cpu, xc, indices.data(), indices.size() * 4);
    put(*gpu, xg, indices.data(), indices.size() * 4);
    GatherDesc d{};
    d.batch = k.batch;
    d.c = k.c;
    d.h = k.h;
    d.w = k.w;
    std::vector<float> factors;  // per channel: scale (u8 / (255 std)), then shift (-mean / std)
    for (int c = 0; c < k.c; ++c) factors.push_back(1.f / (255.f * (0.3f + 0.05f * c)));
    for (int c = 0; c < k.c; ++c) factors.push_back(-(0.2f + 0.1f * c) / (0.3f + 0.05f * c));
    DeviceBuffer fc, fg;
    put(*cpu, fc, factors.data(), factors.size() * 4);
    put(*gpu, fg, factors.data(), factors.size() * 4);
    d.flip = k.flip;
    d.max_shift = k.shift;
    d.seed = 42;
    d.step = 7;
    auto out = twin_out(sample * k.batch);
    DeviceBuffer yc(*cpu, k.batch * 4), yg(*gpu, k.batch * 4);
    d.images = ic.as<std::uint8_t>();
    d.labels = lc.as<std::uint8_t>();
    d.indices = xc.as<std::int32_t>();
    d.scale = fc.f();
    d.shift = fc.f() + k.c;
    cpu->gather_batch(d, out.cf(), yc.as<std::int32_t>());
    d.images = ig.as<std::uint8_t>();
    d.labels = lg.as<std::uint8_t>();
    d.indices = xg.as<std::int32_t>();
    d.scale = fg.f();
    d.shift = fg.f() + k.c;
    gpu->gather_batch(d, out.gf(), yg.as<std::int32_t>());
    const auto oc = host(*cpu, out.c.as<void>(), out.n), og = host(*gpu, out.g.as<void>(), out.n);
    EXPECT_EQ(0, std::memcmp(oc.data(), og.data(), out.n * 4)) << tag << " images";
    EXPECT_EQ(host<std::int32_t>(*cpu, yc.as<void>(), k.batch),
              host<std::int32_t>(*gpu, yg.as<void>(), k.batch))
        << tag << " labels";
  }
}

}  // namespace
}  // namespace sweep::trainer::test
