/*
 * cpu_conv.cpp — 2-D convolution as im2col + sgemm, one sample per TBB task.
 *
 * Per sample, y_n (K, OH*OW) = W (K, C*R*S) * col_n (C*R*S, OH*OW): the product lands in NCHW
 * directly, with no transpose pass, and each task owns one column buffer in the backend's cached
 * per-thread scratch. Backward data is W^T * dy_n followed by col2im. The weight gradient sums over
 * the batch; it is accumulated in a fixed number of batch slices (independent of the thread count)
 * and the slices are added in order, so it is reproducible bit for bit. 1x1 convolutions with
 * stride 1 and no padding skip im2col: the input already is the column matrix. Stride-1 im2col
 * zero-pads the sample once and then copies fixed-width runs (see im2col_unit).
 */
#include <cblas.h>

#include <algorithm>

#include "trainer/cpu/cpu_backend.h"
#include "trainer/cpu/parallel.h"
#include "trainer/cpu/reduce.h"

namespace sweep::trainer {

namespace {

bool is_pointwise(const ConvGeom& g) {
  return g.r == 1 && g.s == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 && g.pad_w == 0;
}

// col (C*R*S, OH*OW) from one sample x (C, H, W); zeros where the window hangs over the padding.
// Any stride; used for strided convolutions.
void im2col_strided(const ConvGeom& g, const float* __restrict x, float* __restrict col) {
  const int ohw = g.out_h * g.out_w;
  for (int c = 0; c < g.c; ++c) {
    const float* xc = x + std::size_t(c) * g.h * g.w;
    for (int r = 0; r < g.r; ++r) {
      for (int s = 0; s < g.s; ++s) {
        float* row = col + (std::size_t(c) * g.r * g.s + std::size_t(r) * g.s + s) * ohw;
        // Output columns whose input column lies inside [0, W): ow in [ow_lo, ow_hi).
        const int off_w = s - g.pad_w;
        int ow_lo = off_w >= 0 ? 0 : (-off_w + g.stride_w - 1) / g.stride_w;
        int ow_hi = g.w - off_w > 0 ? (g.w - off_w + g.stride_w - 1) / g.stride_w : 0;
        ow_lo = std::min(ow_lo, g.out_w);
        ow_hi = std::clamp(ow_hi, ow_lo, g.out_w);
        for (int oh = 0; oh < g.out_h; ++oh) {
          float* out = row + std::size_t(oh) * g.out_w;
          const int ih = oh * g.stride_h - g.pad_h + r;
          // Plain loops, not memcpy/fill: rows are short (often 8 to 32 values), where the call
          // overhead would dominate.
          if (ih < 0 || ih >= g.h) {
            for (int ow = 0; ow < g.out_w; ++ow) out[ow] = 0.f;
            continue;
          }
          const float* xr = xc + std::size_t(ih) * g.w;
          int ow = 0;
          for (; ow < ow_lo; ++ow) out[ow] = 0.f;
          if (g.stride_w == 1) {
            for (; ow < ow_hi; ++ow) out[ow] = xr[ow + off_w];
          } else {
            for (; ow < ow_hi; ++ow) out[ow] = xr[ow * g.stride_w + off_w];
          }
          for (; ow < g.out_w; ++ow) out[ow] = 0.f;
        }
      }
    }
  }
}

// Stride 1 over an unpadded (or already padded) x (C, H, W): each column row is OH runs of OW
// contiguous values. With OW a compile-time constant the copy of a run is a few vector moves;
// with a run-time OW it is a loop with a prologue and a tail, several times slower.
template <int kOutW>
void im2col_unit(const float* __restrict x, float* __restrict col, int c, int h, int w, int r,
                 int s, int out_h, int out_w_runtime) {
  const int out_w = kOutW > 0 ? kOutW : out_w_runtime;
  for (int ci = 0; ci < c; ++ci)
    for (int ri = 0; ri < r; ++ri)
      for (int si = 0; si < s; ++si) {
        const float* src = x + (std::size_t(ci) * h + ri) * w + si;
        for (int oh = 0; oh < out_h; ++oh, src += w, col += out_w)
          for (int ow = 0; ow < out_w; ++ow) col[ow] = src[ow];
      }
}

bool unit_stride(const ConvGeom& g) { return g.stride_h == 1 && g.stride_w == 1; }

// Per-thread floats im2col needs besides the columns: a zero-padded copy of one sample, so that
// padded stride-1 convolutions take the fast unpadded path too.
std::size_t im2col_pad_floats(const ConvGeom& g) {
  if (!unit_stride(g) || (g.pad_h == 0 && g.pad_w == 0)) return 0;
  return std::size_t(g.c) * (g.h + 2 * g.pad_h) * (g.w + 2 * g.pad_w);
}

void im2col(const ConvGeom& g, const float* __restrict x, float* __restrict col,
            float* __restrict pad_buffer) {
  if (!unit_stride(g)) {
    im2col_strided(g, x, col);
    return;
  }
  const float* src = x;
  int h = g.h, w = g.w;
  if (g.pad_h || g.pad_w) {
    h += 2 * g.pad_h;
    w += 2 * g.pad_w;
    std::fill(pad_buffer, pad_buffer + std::size_t(g.c) * h * w, 0.f);
    for (int ci = 0; ci < g.c; ++ci)
      for (int y = 0; y < g.h; ++y) {
        const float* in = x + (std::size_t(ci) * g.h + y) * g.w;
        float* out = pad_buffer + (std::size_t(ci) * h + y + g.pad_h) * w + g.pad_w;
        for (int xi = 0; xi < g.w; ++xi) out[xi] = in[xi];
      }
    src = pad_buffer;
  }
  switch (g.out_w) {  // the output widths of common networks (MNIST, CIFAR, their pooled sizes)
    case 4:
      im2col_unit<4>(src, col, g.c, h, w, g.r, g.s, g.out_h, 4);
      break;
    case 8:
      im2col_unit<8>(src, col, g.c, h, w, g.r, g.s, g.out_h, 8);
      break;
    case 12:
      im2col_unit<12>(src, col, g.c, h, w, g.r, g.s, g.out_h, 12);
      break;
    case 16:
      im2col_unit<16>(src, col, g.c, h, w, g.r, g.s, g.out_h, 16);
      break;
    case 24:
      im2col_unit<24>(src, col, g.c, h, w, g.r, g.s, g.out_h, 24);
      break;
    case 28:
      im2col_unit<28>(src, col, g.c, h, w, g.r, g.s, g.out_h, 28);
      break;
    case 32:
      im2col_unit<32>(src, col, g.c, h, w, g.r, g.s, g.out_h, 32);
      break;
    default:
      im2col_unit<0>(src, col, g.c, h, w, g.r, g.s, g.out_h, g.out_w);
      break;
  }
}

// dx (C, H, W) = sum of the column gradients over every window position that read it.
void col2im(const ConvGeom& g, const float* __restrict col, float* __restrict dx) {
  const int ohw = g.out_h * g.out_w;
  std::fill(dx, dx + std::size_t(g.c) * g.h * g.w, 0.f);
  for (int c = 0; c < g.c; ++c) {
    float* dxc = dx + std::size_t(c) * g.h * g.w;
    for (int r = 0; r < g.r; ++r) {
      for (int s = 0; s < g.s; ++s) {
        const float* row = col + (std::size_t(c) * g.r * g.s + std::size_t(r) * g.s + s) * ohw;
        const int off_w = s - g.pad_w;
        int ow_lo = off_w >= 0 ? 0 : (-off_w + g.stride_w - 1) / g.stride_w;
        int ow_hi = g.w - off_w > 0 ? (g.w - off_w + g.stride_w - 1) / g.stride_w : 0;
        ow_lo = std::min(ow_lo, g.out_w);
        ow_hi = std::clamp(ow_hi, ow_lo, g.out_w);
        for (int oh = 0; oh < g.out_h; ++oh) {
          const int ih = oh * g.stride_h - g.pad_h + r;
          if (ih < 0 || ih >= g.h) continue;
          const float* in = row + std::size_t(oh) * g.out_w;
          float* dr = dxc + std::size_t(ih) * g.w;
          if (g.stride_w == 1) {
            for (int ow = ow_lo; ow < ow_hi; ++ow) dr[ow + off_w] += in[ow];
          } else {
            for (int ow = ow_lo; ow < ow_hi; ++ow) dr[ow * g.stride_w + off_w] += in[ow];
          }
        }
      }
    }
  }
}

// Fixed slice count for the weight-gradient reduction (see the file comment).
constexpr int kWeightGradSlices = 8;

}  // namespace

void CpuBackend::conv2d_forward(const ConvGeom& g, const float* x, const float* w, const float* b,
                                float* y) {
  const std::size_t crs = std::size_t(g.c) * g.r * g.s, ohw = std::size_t(g.out_h) * g.out_w;
  const std::size_t in_sample = std::size_t(g.c) * g.h * g.w, out_sample = g.k * ohw;
  const bool pointwise = is_pointwise(g);
  const std::size_t slot = pointwise ? 0 : crs * ohw + im2col_pad_floats(g);
  float* slots = slot ? thread_scratch(slot) : nullptr;
  const std::size_t grain =
      std::max<std::size_t>(1, (std::size_t{1} << 17) / std::max<std::size_t>(1, out_sample * crs));
  run([&] {
    cpu::for_range(std::size_t(g.n), grain, [&](std::size_t n0, std::size_t n1) {
      float* col = slot ? slots + slot * cpu::thread_slot() : nullptr;
      for (std::size_t n = n0; n < n1; ++n) {
        const float* xn = x + n * in_sample;
        float* yn = y + n * out_sample;
        const float* a = xn;
        if (!pointwise) {
          im2col(g, xn, col, col + crs * ohw);
          a = col;
        }
        float beta = 0.f;
        if (b) {
          for (int k = 0; k < g.k; ++k) std::fill(yn + k * ohw, yn + (k + 1) * ohw, b[k]);
          beta = 1.f;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.k, static_cast<int>(ohw),
                    static_cast<int>(crs), 1.f, w, static_cast<int>(crs), a, static_cast<int>(ohw),
                    beta, yn, static_cast<int>(ohw));
      }
    });
  });
}

void CpuBackend::conv2d_backward(const ConvGeom& g, const float* x, const float* w, const float* dy,
                                 float* dx, float* dw, float* db) {
  const std::size_t crs = std::size_t(g.c) * g.r * g.s, ohw = std::size_t(g.out_h) * g.out_w;
  const std::size_t in_sample = std::size_t(g.c) * g.h * g.w, out_sample = g.k * ohw;
  const std::size_t wsize = std::size_t(g.k) * crs;
  const bool pointwise = is_pointwise(g);
  const int slices = std::min(g.n, kWeightGradSlices);
  // Per thread: the sample's columns, the column gradient, im2col's padded sample.
  const std::size_t slot = pointwise ? 0 : 2 * crs * ohw + im2col_pad_floats(g);
  float* slots = slot ? thread_scratch(slot) : nullptr;
  float* partial = slice_scratch(wsize * slices);

  run([&] {
    cpu::for_slices(std::size_t(slices), [&](std::size_t sl) {
      float* mine = slot ? slots + slot * cpu::thread_slot() : nullptr;
      float* col = mine;
      float* colgrad = mine ? mine + crs * ohw : nullptr;
      float* dw_part = partial + sl * wsize;
      const std::size_t n0 = cpu::slice_begin(g.n, slices, sl);
      const std::size_t n1 = cpu::slice_begin(g.n, slices, sl + 1);
      for (std::size_t n = n0; n < n1; ++n) {
        const float* xn = x + n * in_sample;
        const float* dyn = dy + n * out_sample;
        const float* a = xn;
        if (!pointwise) {
          im2col(g, xn, col, colgrad + crs * ohw);
          a = col;
        }
        // dw_part (K, CRS) (+)= dy_n (K, OHW) * col^T (OHW, CRS)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g.k, static_cast<int>(crs),
                    static_cast<int>(ohw), 1.f, dyn, static_cast<int>(ohw), a,
                    static_cast<int>(ohw), n == n0 ? 0.f : 1.f, dw_part, static_cast<int>(crs));
        if (dx) {
          float* dxn = dx + n * in_sample;
          float* target = pointwise ? dxn : colgrad;
          // colgrad (CRS, OHW) = W^T (CRS, K) * dy_n (K, OHW)
          cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(crs),
                      static_cast<int>(ohw), g.k, 1.f, w, static_cast<int>(crs), dyn,
                      static_cast<int>(ohw), 0.f, target, static_cast<int>(ohw));
          if (!pointwise) col2im(g, colgrad, dxn);
        }
      }
    });
    // Add the slices in order; parallel over weights, each weight's sum is sequential.
    cpu::for_range(wsize, 4096, [&](std::size_t j0, std::size_t j1) {
      for (std::size_t j = j0; j < j1; ++j) {
        float acc = partial[j];
        for (int sl = 1; sl < slices; ++sl) acc += partial[sl * wsize + j];
        dw[j] = acc;
      }
    });
    if (db) {
      cpu::for_range(std::size_t(g.k), 1, [&](std::size_t k0, std::size_t k1) {
        for (std::size_t k = k0; k < k1; ++k) {
          double acc = 0;
          for (int n = 0; n < g.n; ++n) {
            acc += cpu::lane_sum(dy + n * out_sample + k * ohw, ohw);
          }
          db[k] = static_cast<float>(acc);
        }
      });
    }
  });
}

}  // namespace sweep::trainer
