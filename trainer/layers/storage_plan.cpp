/*
 * storage_plan.cpp — the plan in two passes: backwards, what each tensor's readers need (fp32, a
 * given storage, or either); forwards, what each producer writes.
 */
#include "trainer/layers/storage_plan.h"

#include "common/check.h"
#include "trainer/layers/layer.h"

namespace sweep::trainer {

namespace {

enum class Need { fp32, nhwc, either };

Need need_of(Storage s) { return is_nhwc(s) ? Need::nhwc : Need::fp32; }

bool meets(Storage s, Need n) { return n == Need::either || need_of(s) == n; }

}  // namespace

std::vector<Storage> plan_storage(const std::vector<NhwcRole>& roles, Storage nhwc, Storage in,
                                  Storage out) {
  for (const Storage s : {in, out})
    if (is_nhwc(s) && s != nhwc)
      throw Error("storage plan: a list's input or output is kept channels-last in another type");
  const std::size_t count = roles.size();
  // need[i]: what layer i's output must be for the layers after it.
  std::vector<Need> need(count, Need::either);
  if (count) need[count - 1] = need_of(out);
  for (std::size_t i = count; i-- > 1;) {
    switch (roles[i]) {
      case NhwcRole::passthrough:
        need[i - 1] = need[i];
        break;
      case NhwcRole::reads:
      case NhwcRole::reads_writes:
        need[i - 1] = Need::either;
        break;
      case NhwcRole::writes:
      case NhwcRole::none:
        need[i - 1] = Need::fp32;
        break;
    }
  }
  std::vector<Storage> storage(count);
  Storage s = in;
  for (std::size_t i = 0; i < count; ++i) {
    if ((roles[i] == NhwcRole::none || roles[i] == NhwcRole::writes) && is_nhwc(s))
      throw Error("storage plan: layer " + std::to_string(i + 1) +
                  " takes fp32 NCHW only but its input is channels-last");
    switch (roles[i]) {
      case NhwcRole::passthrough:
        break;
      case NhwcRole::writes:
      case NhwcRole::reads_writes:
        s = need[i] == Need::fp32 ? Storage::fp32_nchw : nhwc;
        break;
      case NhwcRole::reads:
      case NhwcRole::none:
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
  std::vector<NhwcRole> roles;
  for (const auto& layer : layers) roles.push_back(layer->nhwc_role(backend));
  const std::vector<Storage> storage = plan_storage(roles, kept_storage(backend), in, out);
  for (std::size_t i = 0; i < layers.size(); ++i)
    layers[i]->set_storage(i ? storage[i - 1] : in, storage[i]);
  return storage;
}

}  // namespace sweep::trainer
