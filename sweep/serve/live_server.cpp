/*
 * live_server.cpp — the routes of `sweep serve` over cpp-httplib (live_server.h).
 */
#include "sweep/serve/live_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "common/check.h"
#include "common/format.h"
#include "common/json.h"
#include "reports/report_live.h"
#include "sweep/serve/serve_pages.h"
#include "sweep/serve/store_version.h"
#include "sweep/serve/sweep_catalog.h"

namespace sweep::serve {
namespace {

namespace fs = std::filesystem;

// Workers: each browser holds a poll and a keep-alive connection or two; a compare page twice.
// Threads answering requests: the held polls (ServeOptions::max_held_polls) and as many again
// for pages, reports and the API.
constexpr std::size_t kWorkerThreads = 128;
// How often a held poll looks at the store's files.
constexpr std::chrono::milliseconds kVersionCheck{200};

const char* const kHtml = "text/html; charset=utf-8";
const char* const kJson = "application/json; charset=utf-8";

bool is_api(const httplib::Request& req) { return req.path.rfind("/api/", 0) == 0; }

// Status + one sentence, as the page or JSON the request's kind expects.
void fail(const httplib::Request& req, httplib::Response& res, int status,
          std::string_view message) {
  res.status = status;
  if (is_api(req)) {
    res.set_content(sweep::json_text(sweep::Json{{"error", message}}), kJson);
  } else {
    res.set_content(message_page(status, message), kHtml);
  }
}

std::string in_quotes(std::string_view name) { return "'" + std::string(name) + "'"; }

// "Host: 127.0.0.1:8787" → "127.0.0.1"; "[::1]:8787" → "::1".
std::string host_name_of(std::string_view header) {
  if (!header.empty() && header.front() == '[') {
    const auto end = header.find(']');
    return std::string(header.substr(1, end == std::string_view::npos ? header.npos : end - 1));
  }
  return std::string(header.substr(0, header.find(':')));
}

// The version a client says it has: ?since=, else an If-None-Match ETag.
std::string known_version(const httplib::Request& req) {
  if (req.has_param("since")) return req.get_param_value("since");
  std::string tag = req.get_header_value("If-None-Match");
  if (tag.rfind("W/", 0) == 0) tag.erase(0, 2);
  if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"')
    tag = tag.substr(1, tag.size() - 2);
  return tag;
}

}  // namespace

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct LiveServer::Impl {
  ServeOptions options;
  httplib::Server server;
  std::mutex mutex;
  std::condition_variable stopped;
  bool stopping = false;
  bool serving = false;         // serve() was entered
  bool serve_returned = false;  // ... and has returned
  int held_polls = 0;           // polls being held now (under mutex)

  explicit Impl(ServeOptions o) : options(std::move(o)) {
    // httplib's default also sets SO_REUSEPORT, with which a second server on the same port
    // would share it silently instead of failing.
    server.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    // httplib owns (and deletes) the queue it is handed.
    server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
    // An idle keep-alive connection holds a worker; short, so stop() ends within a second.
    server.set_keep_alive_timeout(1);
    server.set_payload_max_length(64 * 1024);  // GETs only: no body worth reading

    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.method != "GET" && req.method != "HEAD") {
        res.set_header("Allow", "GET, HEAD");
        fail(req, res, 405, "sweep serve is read-only: it answers GET requests only");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (is_loopback_host(options.host) && req.has_header("Host") &&
          !is_loopback_host(host_name_of(req.get_header_value("Host")))) {
        fail(req, res, 403,
             "this server answers requests for localhost only (the Host header named another "
             "name)");
        return httplib::Server::HandlerResponse::Handled;
      }
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // Called for every status >= 400; fills only the bodies nobody wrote (httplib's own 404s,
    // 400s for requests it could not parse).
    server.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          fail(req, res, res.status,
               res.status == 404 ? "nothing here: " + std::string(req.path)
                                 : std::string("the request could not be answered"));
          return httplib::Server::HandlerResponse::Handled;
        }));
    server.set_exception_handler(
        [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
          std::string message = "internal error (the server's terminal says more)";
          try {
            std::rethrow_exception(error);
          } catch (const Error& e) {
            message = e.what();  // written for users: the call and the reason, no source lines
          } catch (const std::exception& e) {
            std::cerr << "sweep serve: " << req.method << " " << printable(req.path) << ": "
                      << printable(e.what()) << "\n";
          } catch (...) {
            std::cerr << "sweep serve: " << req.method << " " << printable(req.path)
                      << ": unknown exception\n";
          }
          fail(req, res, 500, message);
        });

    server.Get("/", [this](const httplib::Request& req, httplib::Response& res) {
      if (options.home_sweep.empty()) return list_page(req, res);
      res.set_redirect(sweep_page_url(options.home_sweep));
    });
    server.Get(kSweepsUrl, [this](const httplib::Request& req, httplib::Response& res) {
      list_page(req, res);
    });
    server.Get("/api/sweeps", [this](const httplib::Request&, httplib::Response& res) {
      sweep::Json list = sweep::Json::array();
      for (const std::string& name : sweep_names(options.out_dir))
        list.push_back(listing_json(describe_sweep(options.out_dir, name)));
      const sweep::Json body = {{"out", options.out_dir.string()}, {"sweeps", list}};
      res.set_content(sweep::json_text(body), kJson);
    });
    server.Get(R"(/sweep/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      sweep_page(req, res, req.matches[1].str());
    });
    server.Get(R"(/api/sweep/([^/]+))",
               [this](const httplib::Request& req, httplib::Response& res) {
                 sweep_api(req, res, req.matches[1].str());
               });
    server.Get("/compare",
               [this](const httplib::Request& req, httplib::Response& res) { compare(req, res); });
  }

  void list_page(const httplib::Request&, httplib::Response& res) {
    std::vector<SweepListing> sweeps;
    for (const std::string& name : sweep_names(options.out_dir))
      sweeps.push_back(describe_sweep(options.out_dir, name));
    res.set_content(sweeps_page(options.out_dir, sweeps), kHtml);
  }

  // OUT/NAME/sweep.db, or a 404 answered.
  std::optional<fs::path> database(const httplib::Request& req, httplib::Response& res,
                                   const std::string& name) {
    std::optional<fs::path> db = find_sweep_database(options.out_dir, name);
    if (!db)
      fail(req, res, 404,
           "no sweep named " + in_quotes(name) + " in " + options.out_dir.string() +
               " (the list of sweeps is at " + kSweepsUrl + ")");
    return db;
  }

  void no_sweep_yet(const httplib::Request& req, httplib::Response& res, const fs::path& db) {
    res.set_header("Retry-After", "2");
    fail(req, res, 503, db.string() + " holds no sweep yet (it is being created); try again");
  }

  void sweep_page(const httplib::Request& req, httplib::Response& res, const std::string& name) {
    const std::optional<fs::path> db = database(req, res, name);
    if (!db) return;
    const StoreVersion version = store_version(*db);
    const std::optional<reports::ReportData> data = load_sweep(*db, name);
    if (!data) return no_sweep_yet(req, res, *db);
    const reports::LivePage live{
        .api_url = sweep_api_url(name), .version = issued_token(version), .home_url = kSweepsUrl};
    res.set_content(reports::render_live_report(*data, live), kHtml);
  }

  void sweep_api(const httplib::Request& req, httplib::Response& res, const std::string& name) {
    const std::optional<fs::path> db = database(req, res, name);
    if (!db) return;
    int wait_seconds = 0;
    if (req.has_param("wait")) {
      const std::string text = req.get_param_value("wait");
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), wait_seconds);
      if (ec != std::errc() || end != text.data() + text.size() || wait_seconds < 0 ||
          wait_seconds > options.max_wait_seconds)
        return fail(req, res, 400,
                    "wait must be a whole number of seconds from 0 to " +
                        std::to_string(options.max_wait_seconds) + ", not " + in_quotes(text));
    }
    const std::string known = known_version(req);
    StoreVersion version = store_version(*db);
    if (!known.empty() && version.marker == known) {
      // Held until the files change, the time is up, or the server stops; at most a second when
      // max_held_polls are held already, so that they never take every thread.
      {
        const std::lock_guard count(mutex);
        if (held_polls >= options.max_held_polls) wait_seconds = std::min(wait_seconds, 1);
        ++held_polls;
      }
      struct Release {
        Impl& impl;
        ~Release() {
          const std::lock_guard count(impl.mutex);
          --impl.held_polls;
        }
      } release{*this};  // after `lock` below has let go, whatever store_version throws
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(wait_seconds);
      std::unique_lock lock(mutex);
      while (version.marker == known && std::chrono::steady_clock::now() < deadline) {
        if (stopped.wait_for(lock, kVersionCheck, [this] { return stopping; })) break;
        lock.unlock();
        version = store_version(*db);
        lock.lock();
      }
      if (version.marker == known) {
        res.status = 304;
        res.set_header("ETag", "\"" + known + "\"");
        return;
      }
    }
    const std::optional<reports::ReportData> data = load_sweep(*db, name);
    if (!data) return no_sweep_yet(req, res, *db);
    sweep::Json body = reports::live_update(*data);
    const std::string token = issued_token(version);
    body["sweep"] = name;
    body["version"] = token;
    res.set_header("ETag", "\"" + token + "\"");
    res.set_content(sweep::json_text(body), kJson);
  }

  void compare(const httplib::Request& req, httplib::Response& res) {
    const std::string a = req.get_param_value("a"), b = req.get_param_value("b");
    if (a.empty() || b.empty())
      return fail(req, res, 400, "name two sweeps: /compare?a=NAME&b=NAME");
    for (const std::string& name : {a, b})
      if (!database(req, res, name)) return;
    res.set_content(
        compare_page(describe_sweep(options.out_dir, a), describe_sweep(options.out_dir, b)),
        kHtml);
  }
};

LiveServer::LiveServer(ServeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

LiveServer::~LiveServer() { stop(); }

int LiveServer::bind() {
  const ServeOptions& o = impl_->options;
  errno = 0;
  int port = o.port;
  bool bound = false;
  if (o.port == 0) {
    port = impl_->server.bind_to_any_port(o.host);
    bound = port > 0;
  } else {
    bound = impl_->server.bind_to_port(o.host, o.port);
  }
  const int error = errno;  // bind()'s, left as it was by the close() after it
  if (bound) return port;
  const std::string where = o.host + ":" + std::to_string(o.port);
  if (error == EADDRINUSE)
    throw Error("cannot serve on " + where + ": the port is in use (another sweep serve?); " +
                "choose another with --port N");
  if (error == EACCES)
    throw Error("cannot serve on " + where + ": ports below 1024 need privileges; use --port N");
  if (error == EADDRNOTAVAIL)
    throw Error("cannot serve on " + where + ": " + o.host + " is not an address of this machine");
  throw Error("cannot serve on " + where +
              (error ? std::string(": ") + std::strerror(error)
                     : std::string(": the host name does not resolve to an address")));
}

void LiveServer::serve() {
  {
    const std::lock_guard lock(impl_->mutex);
    if (impl_->stopping) return;
    impl_->serving = true;
  }
  impl_->server.listen_after_bind();
  const std::lock_guard lock(impl_->mutex);
  impl_->serve_returned = true;
}

void LiveServer::stop() {
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->stopped.notify_all();
  // httplib's stop() does nothing until its accept loop runs: a serve() just entered on another
  // thread would then never end. So wait for the loop (or for serve() to give up) first.
  for (;;) {
    {
      const std::lock_guard lock(impl_->mutex);
      if (!impl_->serving || impl_->serve_returned) break;
    }
    if (impl_->server.is_running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->server.stop();
}

}  // namespace sweep::serve
