/*
 * cuda_test_util.h — shared pieces of the GPU tests: the skip-without-device fixture, twin
 * buffers holding the same data on the CPU and CUDA backends, and the comparison that every op
 * test uses (|got - ref| <= tol + |ref| * eps, NaN never passes, the worst offenders printed).
 */
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tests/trainer/lenet_config.h"
#include "trainer/backend/backend.h"
#include "trainer/cpu/cpu_backend.h"
#include "trainer/cuda/cuda_backend.h"
#include "trainer/cuda_entry.h"
#include "trainer/train_config.h"

namespace sweep::trainer::test {

inline bool have_cuda() { return cuda_device_count_impl() > 0; }

#define SWEEP_SKIP_WITHOUT_CUDA()                                                                  \
  do {                                                                                             \
    if (!::sweep::trainer::test::have_cuda()) GTEST_SKIP() << "no CUDA device: GPU tests skipped"; \
  } while (0)

// LeNet with its recipe (lenet_config.h) on the seeded synthetic set, seed 7, on `kind` (device 0).
inline TrainConfig synthetic_lenet(DeviceKind kind, int train_size, int test_size, int epochs,
                                   int batch) {
  TrainConfig c = lenet_config(batch, epochs);
  c.data.dataset = sweep::trainer::DatasetKind::synthetic;
  c.data.synthetic.train_size = train_size;
  c.data.synthetic.test_size = test_size;
  c.training.seed = 7;
  c.device.kind = kind;
  c.device.index = 0;
  return c;
}

// Step i's settings for the graph tests' SGD-momentum steps: the learning rate alternates between
// two values, so a replay that kept the captured one would show.
inline OptimizerStep sgdm_step(int i) {
  OptimizerStep s;
  s.kind = OptimizerKind::sgdm;
  s.momentum = 0.9f;
  s.lr = 0.02f * float(1 + i % 2);
  s.weight_decay = 5e-4f;
  s.t = i + 1;
  return s;
}

// A CPU backend and a CUDA backend side by side, with fresh random inputs per test.
class CudaVsCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    SWEEP_SKIP_WITHOUT_CUDA();
    seed = std::random_device{}();
    rng.seed(seed);
    cpu = std::make_unique<CpuBackend>(0);
    gpu = std::make_unique<cuda::CudaBackend>(0);
  }

  std::vector<float> random(std::size_t n, float lo = -1.f, float hi = 1.f) {
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
  }

  // The same floats on both backends.
  struct Twin {
    DeviceBuffer c, g;
    std::size_t n = 0;
    float* cf() const { return c.f(); }
    float* gf() const { return g.f(); }
  };
  Twin twin(const std::vector<float>& host) {
    Twin t{DeviceBuffer(*cpu, host.size() * 4), DeviceBuffer(*gpu, host.size() * 4), host.size()};
    cpu->copy_to_device(t.c.f(), host.data(), host.size() * 4);
    gpu->copy_to_device(t.g.f(), host.data(), host.size() * 4);
    return t;
  }
  Twin twin_random(std::size_t n, float lo = -1.f, float hi = 1.f) {
    return twin(random(n, lo, hi));
  }
  // An output buffer on both, poisoned with NaN so an unwritten element cannot pass.
  Twin twin_out(std::size_t n) {
    return twin(std::vector<float>(n, std::numeric_limits<float>::quiet_NaN()));
  }

  template <class T = float>
  std::vector<T> host(Backend& b, const void* p, std::size_t n) {
    std::vector<T> v(n);
    b.copy_to_host(v.data(), p, n * sizeof(T));
    return v;
  }

  // Every element of the CUDA twin within tol + |cpu| * eps of the CPU twin.
  void expect_close(const Twin& t, double tol, double eps, const std::string& what) {
    expect_close(host(*cpu, t.c.as<void>(), t.n), host(*gpu, t.g.as<void>(), t.n), tol, eps, what);
  }
  void expect_close(const std::vector<float>& ref, const std::vector<float>& got, double tol,
                    double eps, const std::string& what) {
    ASSERT_EQ(ref.size(), got.size()) << what;
    std::size_t bad = 0, worst = 0;
    double worst_excess = -1;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const double r = ref[i], g = got[i], lim = tol + std::fabs(r) * eps;
      const double err = std::fabs(g - r);
      if (!(err <= lim)) {  // NaN fails here
        ++bad;
        const double excess = std::isnan(err) ? 1e300 : err - lim;
        if (excess > worst_excess) {
          worst_excess = excess;
          worst = i;
        }
      }
    }
    EXPECT_EQ(bad, 0u) << what << " (input seed " << seed << "): " << bad << " of " << ref.size()
                       << " values out of tolerance; worst at " << worst << ": cpu " << ref[worst]
                       << " cuda " << got[worst];
  }

  unsigned seed = 0;
  std::mt19937 rng;
  std::unique_ptr<CpuBackend> cpu;  // every optional group, the channels-last ones by reference
  std::unique_ptr<cuda::CudaBackend> gpu;
};

}  // namespace sweep::trainer::test
