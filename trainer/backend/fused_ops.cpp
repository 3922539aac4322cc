/*
 * fused_ops.cpp — the ReLU folds as the ops they fuse (namespace composed), and the choice between
 * a backend's own fold and that composition.
 */
#include "trainer/backend/fused_ops.h"

#include "trainer/backend/backend.h"

namespace sweep::trainer {

namespace {
std::size_t bn_values(const BatchNormGeom& g) {
  return std::size_t(g.n) * std::size_t(g.c) * std::size_t(g.hw);
}
}  // namespace

namespace composed {

void dense_forward_relu(Backend& b, const float* x, const float* w, const float* bias, float* y,
                        int n, int in, int out) {
  b.dense_forward(x, w, bias, y, n, in, out);
  b.relu_forward(y, y, std::size_t(n) * std::size_t(out));
}

void dense_backward_relu_input(Backend& b, const float* x, const float* w, const float* dy,
                               float* dx, float* dw, float* db, int n, int in, int out) {
  b.dense_backward(x, w, dy, dx, dw, db, n, in, out);
  b.relu_backward(x, dx, dx, std::size_t(n) * std::size_t(in));
}

void batchnorm_forward_train_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, float* running_mean,
                                  float* running_var, float* save_mean, float* save_invstd,
                                  float* y) {
  b.batchnorm_forward_train(g, x, gamma, beta, running_mean, running_var, save_mean, save_invstd,
                            y);
  b.relu_forward(y, y, bn_values(g));
}

void batchnorm_forward_infer_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, const float* running_mean,
                                  const float* running_var, float* y) {
  b.batchnorm_forward_infer(g, x, gamma, beta, running_mean, running_var, y);
  b.relu_forward(y, y, bn_values(g));
}

void batchnorm_backward_relu(Backend& b, const BatchNormGeom& g, const float* x, const float* y,
                             const float* dy, const float* gamma, const float* save_mean,
                             const float* save_invstd, float* dx, float* dgamma, float* dbeta) {
  b.relu_backward(y, dy, dx, bn_values(g));
  b.batchnorm_backward(g, x, dx, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
}

void add_relu(Backend& b, const float* a, const float* c, float* y, std::size_t n) {
  b.add(a, c, y, n);
  b.relu_forward(y, y, n);
}

}  // namespace composed

void dense_forward_relu(Backend& b, const float* x, const float* w, const float* bias, float* y,
                        int n, int in, int out) {
  if (FusedOps* f = b.fused_ops())
    f->dense_forward_relu(x, w, bias, y, n, in, out);
  else
    composed::dense_forward_relu(b, x, w, bias, y, n, in, out);
}

void dense_backward_relu_input(Backend& b, const float* x, const float* w, const float* dy,
                               float* dx, float* dw, float* db, int n, int in, int out) {
  if (FusedOps* f = b.fused_ops())
    f->dense_backward_relu_input(x, w, dy, dx, dw, db, n, in, out);
  else
    composed::dense_backward_relu_input(b, x, w, dy, dx, dw, db, n, in, out);
}

void batchnorm_forward_train_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, float* running_mean,
                                  float* running_var, float* save_mean, float* save_invstd,
                                  float* y) {
  if (FusedOps* f = b.fused_ops())
    f->batchnorm_forward_train_relu(g, x, gamma, beta, running_mean, running_var, save_mean,
                                    save_invstd, y);
  else
    composed::batchnorm_forward_train_relu(b, g, x, gamma, beta, running_mean, running_var,
                                           save_mean, save_invstd, y);
}

void batchnorm_forward_infer_relu(Backend& b, const BatchNormGeom& g, const float* x,
                                  const float* gamma, const float* beta, const float* running_mean,
                                  const float* running_var, float* y) {
  if (FusedOps* f = b.fused_ops())
    f->batchnorm_forward_infer_relu(g, x, gamma, beta, running_mean, running_var, y);
  else
    composed::batchnorm_forward_infer_relu(b, g, x, gamma, beta, running_mean, running_var, y);
}

void batchnorm_backward_relu(Backend& b, const BatchNormGeom& g, const float* x, const float* y,
                             const float* dy, const float* gamma, const float* save_mean,
                             const float* save_invstd, float* dx, float* dgamma, float* dbeta) {
  if (FusedOps* f = b.fused_ops())
    f->batchnorm_backward_relu(g, x, y, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta);
  else
    composed::batchnorm_backward_relu(b, g, x, y, dy, gamma, save_mean, save_invstd, dx, dgamma,
                                      dbeta);
}

void add_relu(Backend& b, const float* a, const float* c, float* y, std::size_t n) {
  if (FusedOps* f = b.fused_ops())
    f->add_relu(a, c, y, n);
  else
    composed::add_relu(b, a, c, y, n);
}

}  // namespace sweep::trainer
