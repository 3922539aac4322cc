/*
 * store.cpp — opening a store (recognise, configure, migrate) and the sweeps table.
 *
 * The decision: opening is where every "this is not your file" case is turned into one
 * sweep::Error that names the path and says what to do; after a successful open, a failing
 * SQLite call is a genuine I/O or disk problem and surfaces as CallError with its call and line.
 */
#include <chrono>
#include <iterator>
#include <system_error>

#include "common/json.h"
#include "store/schema.h"
#include "store/store_impl.h"

namespace sweep {

using store_detail::Connection;
using store_detail::Statement;

double utc_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// ---- enum text ------------------------------------------------------------------------------

namespace {
constexpr Word<SweepState> kSweepStates[] = {
    {SweepState::created, "created"},     {SweepState::running, "running"},
    {SweepState::completed, "completed"}, {SweepState::interrupted, "interrupted"},
    {SweepState::failed, "failed"},       {SweepState::cancelled, "cancelled"}};
constexpr Word<MetricGoal> kGoals[] = {{MetricGoal::maximize, "maximize"},
                                       {MetricGoal::minimize, "minimize"}};
constexpr Word<JobState> kJobStates[] = {{JobState::queued, "queued"},
                                         {JobState::running, "running"},
                                         {JobState::done, "done"},
                                         {JobState::failed, "failed"},
                                         {JobState::cancelled, "cancelled"}};
}  // namespace

Words<SweepState> words_of(SweepState) { return {kSweepStates, std::size(kSweepStates)}; }
Words<MetricGoal> words_of(MetricGoal) { return {kGoals, std::size(kGoals)}; }
Words<JobState> words_of(JobState) { return {kJobStates, std::size(kJobStates)}; }

std::string_view to_string(SweepState s) { return name_of(s); }
std::optional<SweepState> parse_sweep_state(std::string_view s) {
  return parse_word<SweepState>(s);
}
std::string_view to_string(MetricGoal g) { return name_of(g); }
std::optional<MetricGoal> parse_metric_goal(std::string_view s) {
  return parse_word<MetricGoal>(s);
}
std::string_view to_string(JobState s) { return name_of(s); }
std::optional<JobState> parse_job_state(std::string_view s) { return parse_word<JobState>(s); }

namespace store_detail {

template <class Enum>
Enum parse_cell(std::optional<Enum> parsed, const std::string& text, const char* column) {
  if (!parsed) throw Error("the store holds an unknown " + std::string(column) + " '" + text + "'");
  return *parsed;
}

SweepRow read_sweep(const Statement& s, int c) {
  SweepRow r;
  r.id = s.int64(c + 0);
  r.name = s.text(c + 1);
  r.config_yaml = s.text(c + 2);
  r.config_path = s.text(c + 3);
  r.metric_name = s.text(c + 4);
  r.metric_goal = parse_cell(parse_metric_goal(s.text(c + 5)), s.text(c + 5), "metric goal");
  r.state = parse_cell(parse_sweep_state(s.text(c + 6)), s.text(c + 6), "sweep state");
  r.devices = s.text(c + 7);
  r.created_at = s.real(c + 8);
  r.started_at = s.optional_real(c + 9);
  r.finished_at = s.optional_real(c + 10);
  return r;
}

TrialRow read_trial(const Statement& s, int c) {
  TrialRow r;
  r.id = s.int64(c + 0);
  r.sweep_id = s.int64(c + 1);
  r.number = s.int64(c + 2);
  r.state = parse_cell(parse_trial_state(s.text(c + 3)), s.text(c + 3), "trial state");
  r.device = s.text(c + 4);
  r.params = parse_json_cell(s.text(c + 5), "trials.params_json");
  r.config_yaml = s.text(c + 6);
  r.seed = s.int64(c + 7);
  r.repeat = s.int64(c + 8);
  r.queued_at = s.real(c + 9);
  r.started_at = s.optional_real(c + 10);
  r.finished_at = s.optional_real(c + 11);
  r.wait_reason = s.text(c + 12);
  r.stop_reason = s.text(c + 13);
  r.error = s.text(c + 14);
  r.attempts = s.int64(c + 15);
  r.checkpoint_path = s.text(c + 16);
  r.log_path = s.text(c + 17);
  r.summary = parse_json_cell(s.text(c + 18), "trials.summary_json");
  r.updated_at = s.real(c + 19);
  return r;
}

JobRow read_job(const Statement& s) {
  JobRow r;
  r.id = s.int64(0);
  r.sweep_id = s.optional_int64(1);
  r.config_path = s.text(2);
  r.config_yaml = s.text(3);
  r.priority = s.int64(4);
  r.state = parse_cell(parse_job_state(s.text(5)), s.text(5), "job state");
  r.lease_owner = s.text(6);
  r.lease_expires_at = s.optional_real(7);
  r.heartbeat_at = s.optional_real(8);
  r.attempts = s.int64(9);
  r.max_attempts = s.int64(10);
  r.created_at = s.real(11);
  r.started_at = s.optional_real(12);
  r.finished_at = s.optional_real(13);
  r.error = s.text(14);
  r.exit_code = s.optional_int64(15);
  r.target.working_dir = s.text(16);
  r.target.sweep_name = s.text(17);
  r.target.output_dir = s.text(18);
  r.target.overrides =
      parse_json_cell(s.text(19), "jobs.overrides_json").get<std::vector<std::string>>();
  r.target.trial_crash_limit = s.int64(20);
  return r;
}

sweep::Json parse_json_cell(const std::string& text, const char* where) {
  auto parsed = sweep::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded())
    throw Error(std::string("the store holds invalid JSON in ") + where + ": '" +
                text.substr(0, 80) + "'");
  return parsed;
}

}  // namespace store_detail

std::unique_lock<std::mutex> Store::Impl::lock_for_write() {
  if (conn.read_only())
    throw Error("the sweep database " + conn.path().string() +
                " was opened read-only; this command cannot change it");
  return std::unique_lock(mutex);
}

Store::Store(const std::filesystem::path& path, StoreOptions options)
    : impl_(std::make_unique<Impl>(path, options)) {}
Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

const std::filesystem::path& Store::path() const { return impl_->conn.path(); }
bool Store::read_only() const { return impl_->conn.read_only(); }
int Store::schema_version() const { return impl_->schema_version; }
int Store::current_schema_version() { return store_detail::current_schema_version(); }

// ---- sweeps ---------------------------------------------------------------------------------

std::int64_t Store::create_sweep(const SweepSpec& spec, IfExists if_exists) {
  if (spec.name.empty()) throw Error("a sweep needs a name");
  if (spec.metric_name.empty()) throw Error("sweep '" + spec.name + "' needs a metric name");
  auto lock = impl_->lock_for_write();
  auto& conn = impl_->conn;
  return conn.write([&]() -> std::int64_t {
    {
      auto s = conn.statement("SELECT id, state FROM sweeps WHERE name = ?");
      s->bind_all(spec.name);
      if (s->step()) {
        if (if_exists == IfExists::reuse) return s->int64(0);
        throw Error("a sweep named '" + spec.name + "' already exists in " + conn.path().string() +
                    " (id " + std::to_string(s->int64(0)) + ", " + s->text(1) +
                    "): choose another name, or resume it");
      }
    }
    auto s = conn.statement(
        "INSERT INTO sweeps (name, config_yaml, config_path, metric_name, metric_goal, state, "
        "devices, created_at) VALUES (?, ?, ?, ?, ?, 'created', ?, ?)");
    s->bind_all(spec.name, spec.config_yaml, spec.config_path, spec.metric_name,
                to_string(spec.metric_goal), spec.devices, utc_now())
        .step();
    return conn.last_insert_rowid();
  });
}

std::optional<SweepRow> Store::find_sweep(std::string_view name) const {
  return impl_->query_one("SELECT " SWEEP_SWEEP_COLUMNS " FROM sweeps WHERE name = ?",
                          store_detail::sweep_row, name);
}

std::optional<SweepRow> Store::find_sweep(std::int64_t id) const {
  return impl_->query_one("SELECT " SWEEP_SWEEP_COLUMNS " FROM sweeps WHERE id = ?",
                          store_detail::sweep_row, id);
}

SweepRow Store::sweep_named(std::string_view name) const {
  if (std::optional<SweepRow> row = find_sweep(name)) return *row;
  std::string held;
  for (const SweepSummary& s : list_sweeps())
    held += (held.empty() ? "'" : ", '") + s.sweep.name + "'";
  throw Error("no sweep named '" + std::string(name) + "' in " + path().string() +
              (held.empty() ? " (it holds no sweep)" : " (it holds " + held + ")"));
}

std::vector<SweepSummary> Store::list_sweeps() const {
  auto lock = impl_->lock_for_read();
  auto& conn = impl_->conn;
  return conn.read([&] {
    std::vector<SweepSummary> out;
    // One pass: a sweep's (state, count) rows arrive together because the sort keys are the
    // sweep's own; a sweep with no trial yields one row with a NULL state.
    auto s = conn.statement(
        "SELECT s.id, s.name, s.config_yaml, s.config_path, s.metric_name, s.metric_goal, "
        "s.state, s.devices, s.created_at, s.started_at, s.finished_at, t.state, count(t.id) "
        "FROM sweeps s LEFT JOIN trials t ON t.sweep_id = s.id "
        "GROUP BY s.id, t.state ORDER BY s.created_at DESC, s.id DESC");
    while (s->step()) {
      const std::int64_t id = s->int64(0);
      if (out.empty() || out.back().sweep.id != id)
        out.push_back({store_detail::read_sweep(*s), {}, 0});
      if (s->is_null(11)) continue;
      const auto state = parse_trial_state(s->text(11));
      if (!state) throw Error("the store holds an unknown trial state '" + s->text(11) + "'");
      out.back().trials_by_state[*state] = s->int64(12);
      out.back().trial_count += s->int64(12);
    }
    return out;
  });
}

void Store::set_sweep_state(std::int64_t sweep_id, SweepState state) {
  const bool starts = state == SweepState::running;
  const bool ends = state != SweepState::running && state != SweepState::created;
  // Running again (resume) clears finished_at but keeps the first started_at.
  if (impl_->execute("UPDATE sweeps SET state = ?1, "
                     "started_at = CASE WHEN ?2 THEN coalesce(started_at, ?4) ELSE started_at END, "
                     "finished_at = CASE WHEN ?3 THEN ?4 WHEN ?2 THEN NULL ELSE finished_at END "
                     "WHERE id = ?5",
                     to_string(state), starts ? 1 : 0, ends ? 1 : 0, utc_now(), sweep_id) != 1)
    throw Error("no sweep with id " + std::to_string(sweep_id));
}

}  // namespace sweep
