/*
 * messages.cpp — each message's fields in a fixed order; enums travel by their words (so a
 * value out of range is refused by name, not cast), JSON by its text.
 */
#include "cluster/messages.h"

#include "cluster/wire.h"
#include "common/check.h"
#include "common/json.h"
#include "common/trial_state.h"
#include "common/words.h"

namespace sweep::cluster {

namespace {

template <class... T>
struct Overloaded : T... {
  using T::operator()...;
};

void put_device(Writer& w, const scheduler::Device& d) {
  w.put(static_cast<std::uint8_t>(d.kind == scheduler::DeviceKind::cuda ? 1 : 0));
  w.put(static_cast<std::int32_t>(d.index));
}
scheduler::Device get_device(Reader& r) {
  const auto kind = r.get<std::uint8_t>();
  if (kind > 1)
    throw Error("cluster: a damaged message (device kind " + std::to_string(kind) + ")");
  const int index = r.get<std::int32_t>();
  return kind == 1 ? scheduler::Device::cuda(index) : scheduler::Device::cpu(index);
}
void put_devices(Writer& w, const std::vector<scheduler::Device>& devices) {
  w.put(static_cast<std::uint32_t>(devices.size()));
  for (const auto& d : devices) put_device(w, d);
}
std::vector<scheduler::Device> get_devices(Reader& r) {
  std::vector<scheduler::Device> devices(r.get<std::uint32_t>());
  for (auto& d : devices) d = get_device(r);
  return devices;
}
sweep::Json get_json(Reader& r) {
  const std::string text = r.get_string();
  sweep::Json json = sweep::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) throw Error("cluster: a damaged message (its JSON does not parse)");
  return json;
}
template <class Enum>
Enum get_word(Reader& r, const char* what) {
  const std::string word = r.get_string();
  if (auto value = parse_word<Enum>(word)) return *value;
  throw Error(std::string("cluster: a damaged message (") + what + " '" + word + "')");
}

enum class Type : std::uint8_t {
  hello = 1,
  heartbeat,
  open,
  run,
  stop,
  close,
  shutdown,
  metric,
  log,
  progress,
  file,
  finished,
  closed
};

}  // namespace

std::string encode(const Message& message) {
  Writer w;
  std::visit(
      Overloaded{
          [&](const Hello& m) {
            w.put(Type::hello).put(m.hostname).put(std::int32_t(m.local_rank));
            w.put(std::int32_t(m.local_size)).put(std::int32_t(m.cuda_devices));
            w.put(std::uint8_t(m.cuda_built)).put(m.pid);
          },
          [&](const Heartbeat&) { w.put(Type::heartbeat); },
          [&](const Open& m) {
            w.put(Type::open);
            put_devices(w, m.devices);
            w.put(std::int32_t(m.cpu_slots)).put(std::int32_t(m.trials_per_gpu));
          },
          [&](const Run& m) {
            const auto& s = m.spec;
            w.put(Type::run).put(s.id).put(s.number).put(s.name).put(s.params.dump());
            w.put(s.timeout_s).put(std::int32_t(s.gpus));
            put_devices(w, s.placement);
            w.put(m.kind).put(m.payload.dump());
            w.put(static_cast<std::uint32_t>(m.files.size()));
            for (const auto& f : m.files) w.put(f.name).put(f.bytes);
          },
          [&](const Stop& m) {
            w.put(Type::stop).put(m.trial_id).put(scheduler::to_string(m.kind)).put(m.reason);
          },
          [&](const Close&) { w.put(Type::close); },
          [&](const Shutdown&) { w.put(Type::shutdown); },
          [&](const Metric& m) {
            const auto& p = m.point;
            w.put(Type::metric).put(m.trial_id).put(p.name).put(p.value).put(p.step);
            w.put(p.epoch).put(p.wall_time).put(p.epoch_position);
          },
          [&](const Log& m) { w.put(Type::log).put(m.trial_id).put(m.line); },
          [&](const Progress& m) {
            w.put(Type::progress).put(m.trial_id).put(m.fraction).put(m.text);
          },
          [&](const File& m) {
            w.put(Type::file).put(m.trial_id).put(m.file.name).put(m.file.bytes);
          },
          [&](const Finished& m) {
            w.put(Type::finished).put(m.trial_id).put(to_string(m.outcome.state));
            w.put(m.outcome.message).put(json_text(m.outcome.summary));
          },
          [&](const Closed&) { w.put(Type::closed); },
      },
      message);
  return w.take();
}

Message decode(std::string_view bytes) {
  Reader r(bytes);
  const auto type = static_cast<Type>(r.get<std::uint8_t>());
  Message message;
  switch (type) {
    case Type::hello: {
      Hello m;
      m.hostname = r.get_string();
      m.local_rank = r.get<std::int32_t>();
      m.local_size = r.get<std::int32_t>();
      m.cuda_devices = r.get<std::int32_t>();
      m.cuda_built = r.get<std::uint8_t>() != 0;
      m.pid = r.get<std::int64_t>();
      message = std::move(m);
      break;
    }
    case Type::heartbeat:
      message = Heartbeat{};
      break;
    case Type::open: {
      Open m;
      m.devices = get_devices(r);
      m.cpu_slots = r.get<std::int32_t>();
      m.trials_per_gpu = r.get<std::int32_t>();
      message = std::move(m);
      break;
    }
    case Type::run: {
      Run m;
      auto& s = m.spec;
      s.id = r.get<std::int64_t>();
      s.number = r.get<std::int64_t>();
      s.name = r.get_string();
      s.params = get_json(r);
      s.timeout_s = r.get<double>();
      s.gpus = r.get<std::int32_t>();
      s.placement = get_devices(r);
      m.kind = r.get_string();
      m.payload = get_json(r);
      m.files.resize(r.get<std::uint32_t>());
      for (auto& f : m.files) {
        f.name = r.get_string();
        f.bytes = r.get_string();
      }
      message = std::move(m);
      break;
    }
    case Type::stop: {
      Stop m;
      m.trial_id = r.get<std::int64_t>();
      m.kind = get_word<scheduler::StopKind>(r, "stop kind");
      m.reason = r.get_string();
      message = std::move(m);
      break;
    }
    case Type::close:
      message = Close{};
      break;
    case Type::shutdown:
      message = Shutdown{};
      break;
    case Type::metric: {
      Metric m;
      m.trial_id = r.get<std::int64_t>();
      auto& p = m.point;
      p.name = r.get_string();
      p.value = r.get<double>();
      p.step = r.get<std::int64_t>();
      p.epoch = r.get<std::int64_t>();
      p.wall_time = r.get<double>();
      p.epoch_position = r.get<double>();
      message = std::move(m);
      break;
    }
    case Type::log: {
      Log m;
      m.trial_id = r.get<std::int64_t>();
      m.line = r.get_string();
      message = std::move(m);
      break;
    }
    case Type::progress: {
      Progress m;
      m.trial_id = r.get<std::int64_t>();
      m.fraction = r.get<double>();
      m.text = r.get_string();
      message = std::move(m);
      break;
    }
    case Type::file: {
      File m;
      m.trial_id = r.get<std::int64_t>();
      m.file.name = r.get_string();
      m.file.bytes = r.get_string();
      message = std::move(m);
      break;
    }
    case Type::finished: {
      Finished m;
      m.trial_id = r.get<std::int64_t>();
      m.outcome.state = get_word<TrialState>(r, "trial state");
      m.outcome.message = r.get_string();
      m.outcome.summary = get_json(r);
      message = std::move(m);
      break;
    }
    case Type::closed:
      message = Closed{};
      break;
    default:
      throw Error("cluster: a damaged message (type " + std::to_string(static_cast<int>(type)) +
                  ")");
  }
  if (!r.done()) throw Error("cluster: a damaged message (bytes after its end)");
  return message;
}

void append_to_frame(std::string& frame, std::string_view message) {
  const std::uint64_t size = message.size();
  frame.append(reinterpret_cast<const char*>(&size), sizeof size);
  frame.append(message.data(), message.size());
}

std::string_view name_of(const Message& message) {
  static constexpr std::string_view kNames[] = {"Hello", "Heartbeat", "Open",   "Run", "Stop",
                                                "Close", "Shutdown",  "Metric", "Log", "Progress",
                                                "File",  "Finished",  "Closed"};
  return kNames[message.index()];
}

}  // namespace sweep::cluster
