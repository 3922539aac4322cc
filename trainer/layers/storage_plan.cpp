/*
 * storage_plan.cpp — the plan in two passes: backwards, what each tensor's readers need (fp32, a
 * given storage, or either); forwards, what each producer writes.
 */
#include "trainer/layers/storage_plan.h"

#include "common/check.h"
#include "trainer/layers/layer.h"

namespace sweep::trainer {

namespace {

enum class Need { fp32, bf16, either };

Need need_of(Storage s) { return is_bf16(s) ? Need::bf16 : Need::fp32; }

bool meets(Storage s, Need n) { return n == Need::either || need_of(s) == n; }

}  // namespace

std::vector<Storage> plan_storage(const std::vector<Bf16Role>& roles, Storage in, Storage out) {
  const std::size_t count = roles.size();
  // need[i]: what layer i's output must be for the layers after it.
  std::vector<Need> need(count, Need::either);
  if (count) need[count - 1] = need_of(out);
  for (std::size_t i = count; i-- > 1;) {
    switch (roles[i]) {
      case Bf16Role::passthrough:
        need[i - 1] = need[i];
        break;
      case Bf16Role::reads:
      case Bf16Role::reads_writes:
        need[i - 1] = Need::either;
        break;
      case Bf16Role::writes:
      case Bf16Role::none:
        need[i - 1] = Need::fp32;
        break;
    }
  }
  std::vector<Storage> storage(count);
  Storage s = in;
  for (std::size_t i = 0; i < count; ++i) {
    if ((roles[i] == Bf16Role::none || roles[i] == Bf16Role::writes) && is_bf16(s))
      throw Error("storage plan: layer " + std::to_string(i + 1) +
                  " takes fp32 only but its input is bf16");
    switch (roles[i]) {
      case Bf16Role::passthrough:
        break;
      case Bf16Role::writes:
      case Bf16Role::reads_writes:
        s = need[i] == Need::fp32 ? Storage::fp32_nchw : Storage::bf16_nhwc;
        break;
      case Bf16Role::reads:
      case Bf16Role::none:
        s = Storage::fp32_nchw;
        break;
    }
    if (!meets(s, need[i]))
      throw Error("storage plan: layer " + std::to_string(i + 1) +
                  "'s output cannot be stored as the layers after it need");
    storage[i] = s;
  }
  return storage;
}

std::vector<Storage> set_layer_storage(const std::vector<std::unique_ptr<Layer>>& layers,
                                       const Backend& backend, Storage in, Storage out) {
  std::vector<Bf16Role> roles;
  for (const auto& layer : layers) roles.push_back(layer->bf16_role(backend));
  const std::vector<Storage> storage = plan_storage(roles, in, out);
  for (std::size_t i = 0; i < layers.size(); ++i)
    layers[i]->set_storage(i ? storage[i - 1] : in, storage[i]);
  return storage;
}

}  // namespace sweep::trainer
