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
#include "sweep/serve/host_check.h"
#include "sweep/serve/http/framing.h"
#include "sweep/serve/http/guarded_server.h"
#include "sweep/serve/render_cache.h"
#include "sweep/serve/serve_pages.h"
#include "sweep/serve/store_version.h"
#include "sweep/serve/sweep_catalog.h"

namespace sweep::serve {
namespace {

namespace fs = std::filesystem;

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

// The version a client says it has: ?since=, else an If-None-Match ETag.
std::string known_version(const httplib::Request& req) {
  if (req.has_param("since")) return req.get_param_value("since");
  std::string tag = req.get_header_value("If-None-Match");
  if (tag.rfind("W/", 0) == 0) tag.erase(0, 2);
  if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"')
    tag = tag.substr(1, tag.size() - 2);
  return tag;
}

// A version of the store as the cache tells texts apart: one made before the files settled may
// miss a write within the same tick (store_version.h), so it is never reused once they have.
std::string cache_version(const StoreVersion& version) {
  return version.settled ? version.marker : version.marker + "\n(settling)";
}

// Answers with `text` then `tail`, sent from the shared text itself: no copy per request.
void send_shared(httplib::Response& res, RenderCache::Text text, std::string tail,
                 const char* type) {
  const std::size_t size = text->size() + tail.size();
  res.set_content_provider(size, type,
                           [text = std::move(text), tail = std::move(tail)](
                               std::size_t offset, std::size_t, httplib::DataSink& sink) {
                             if (offset < text->size())
                               return sink.write(text->data() + offset, text->size() - offset);
                             offset -= text->size();
                             return sink.write(tail.data() + offset, tail.size() - offset);
                           });
}

const ServeOptions& checked(const ServeOptions& options) {
  if (options.host.empty())
    throw Error("cannot serve on an empty host: give an address, such as 127.0.0.1");
  if (options.limits.worker_threads < 1 || options.max_held_polls < 0 ||
      static_cast<std::size_t>(options.max_held_polls) >= options.limits.worker_threads)
    throw Error("held polls (" + std::to_string(options.max_held_polls) +
                ") must leave workers free: give more than that many threads (" +
                std::to_string(options.limits.worker_threads) + ")");
  for (const std::string& name : options.allowed_hosts)
    if (const std::string problem = allow_host_problem(name); !problem.empty())
      throw Error("--allow-host " + printable(name) + ": " + problem);
  return options;
}

}  // namespace

struct LiveServer::Impl {
  ServeOptions options;
  HostPolicy hosts;
  RenderCache cache;
  http::GuardedServer server;
  std::mutex mutex;
  std::condition_variable stopped;
  bool stopping = false;
  bool serving = false;         // serve() was entered
  bool serve_returned = false;  // ... and has returned
  int held_polls = 0;           // polls being held now (under mutex)

  explicit Impl(ServeOptions o)
      : options(checked(o)),
        hosts(options.allowed_hosts, !is_loopback_host(options.host)),
        cache({.max_bytes = options.limits.cache_bytes,
               .max_concurrent = options.limits.max_concurrent_loads}),
        server(options.limits) {
    // httplib's default also sets SO_REUSEPORT, with which a second server on the same port
    // would share it silently instead of failing.
    server.set_socket_options([](socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });

    server.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      if (req.method != "GET" && req.method != "HEAD") {
        res.set_header("Allow", "GET, HEAD");
        fail(req, res, 405, "sweep serve is read-only: it answers GET requests only");
        return httplib::Server::HandlerResponse::Handled;
      }
      const std::size_t host_fields = req.get_header_value_count("Host");
      if (host_fields > 1 || (host_fields == 0 && req.version != "HTTP/1.0")) {
        fail(req, res, 400, "a request names its host in exactly one Host header");
        return httplib::Server::HandlerResponse::Handled;
      }
      if (host_fields == 1 && !hosts.allows(req.get_header_value("Host"))) {
        fail(req, res, 403,
             "this server answers requests for localhost only (the Host header named another "
             "name; sweep serve --allow-host NAME answers that name too)");
        return httplib::Server::HandlerResponse::Handled;
      }
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");
      res.set_header("Accept-Ranges", "none");  // Range is taken out of every request (gate)
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // Called for every status >= 400; fills only the bodies nobody wrote (httplib's own 404s,
    // 400s for requests it could not parse).
    server.set_error_handler(httplib::Server::HandlerWithResponse(
        [](const httplib::Request& req, httplib::Response& res) {
          // The server closes after these (framing.h); the answer says so.
          if (http::ends_framing_trust(res.status)) res.set_header("Connection", "close");
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

  // The page, made once per version of the store; the version it polls from is the one it was
  // made at (a settling one matches no later version, so its first poll answers at once).
  void sweep_page(const httplib::Request& req, httplib::Response& res, const std::string& name) {
    const std::optional<fs::path> db = database(req, res, name);
    if (!db) return;
    const StoreVersion version = store_version(*db);
    const RenderCache::Text page =
        cache.get("page\n" + db->string() + "\n" + name, cache_version(version),
                  [&]() -> std::optional<std::string> {
                    const std::optional<reports::ReportData> data = load_sweep(*db, name);
                    if (!data) return std::nullopt;
                    const reports::LivePage live{.api_url = sweep_api_url(name),
                                                 .version = issued_token(version),
                                                 .home_url = kSweepsUrl};
                    return reports::render_live_report(*data, live);
                  });
    if (!page) return no_sweep_yet(req, res, *db);
    send_shared(res, page, "", kHtml);
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
      if (wait_seconds > 0 && hold_poll()) {
        // Held until the files change, the time is up, or the server stops.
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
      }
      if (version.marker == known) {
        res.status = 304;
        res.set_header("ETag", "\"" + known + "\"");
        return;
      }
    }
    // {"data":...,"summary":...,"sweep":NAME} without its closing brace, once per version; each
    // answer adds its own version token.
    const RenderCache::Text body =
        cache.get("api\n" + db->string() + "\n" + name, cache_version(version),
                  [&]() -> std::optional<std::string> {
                    const std::optional<reports::ReportData> data = load_sweep(*db, name);
                    if (!data) return std::nullopt;
                    sweep::Json update = reports::live_update(*data);
                    update["sweep"] = name;
                    std::string text = sweep::json_text(update);
                    text.pop_back();
                    return text;
                  });
    if (!body) return no_sweep_yet(req, res, *db);
    const std::string token = issued_token(version);
    res.set_header("ETag", "\"" + token + "\"");
    send_shared(res, body, ",\"version\":" + sweep::json_text(sweep::Json(token)) + "}", kJson);
  }

  // Whether one more poll may be held: at most max_held_polls, so that the workers they hold
  // never are all of them. One not held is answered at once.
  bool hold_poll() {
    const std::lock_guard count(mutex);
    if (held_polls >= options.max_held_polls) return false;
    ++held_polls;
    return true;
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
  impl_->server.serve();
  const std::lock_guard lock(impl_->mutex);
  impl_->serve_returned = true;
}

void LiveServer::stop() {
  {
    const std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->stopped.notify_all();
  impl_->server.halt();
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

std::uint64_t LiveServer::report_loads() const { return impl_->cache.renders(); }

}  // namespace sweep::serve
