// A request's bytes as the gate judges them (request_head.h): complete or not, within the header
// and body limits or not, and the head handed on without Range.
#include "sweep/serve/request_head.h"

#include <gtest/gtest.h>

#include <string>

namespace sweep::serve {
namespace {

using State = RequestScan::State;
const RequestLimits kLimits{.max_head_bytes = 1024, .max_header_fields = 4, .max_body_bytes = 16};

TEST(RequestHead, CompleteOnlyWithItsBlankLineAndItsWholeBody) {
  const std::string head = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(scan_request("GET / HTTP/1.1\r\nHost: local", kLimits).state, State::incomplete);
  EXPECT_EQ(scan_request("GET / HTTP/1.1\r\nHost: localhost\r\n", kLimits).state,
            State::incomplete);
  const RequestScan whole = scan_request(head + "GET /next", kLimits);
  EXPECT_EQ(whole.state, State::complete);
  EXPECT_EQ(whole.head_bytes, head.size());
  EXPECT_EQ(whole.body_bytes, 0u);

  const std::string with_body = "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n";
  EXPECT_EQ(scan_request(with_body + "abc", kLimits).state, State::incomplete);
  const RequestScan posted = scan_request(with_body + "abcde", kLimits);
  EXPECT_EQ(posted.state, State::complete);
  EXPECT_EQ(posted.body_bytes, 5u);
}

TEST(RequestHead, TooManyFieldsOrBytesAreRefusedBeforeTheHeadEnds) {
  std::string head = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 4; ++i) head += "X-" + std::to_string(i) + ": y\r\n";
  EXPECT_EQ(scan_request(head + "\r\n", kLimits).state, State::complete);  // 4 fields: allowed
  head += "X-4: y\r\n";                                                    // a fifth
  EXPECT_EQ(scan_request(head, kLimits).state, State::head_too_large);
  EXPECT_EQ(scan_request(head + "\r\n", kLimits).state, State::head_too_large);
  // One long field, no end yet: refused once past the limit, without waiting for the rest.
  EXPECT_EQ(scan_request("GET / HTTP/1.1\r\nX: " + std::string(1100, 'a'), kLimits).state,
            State::head_too_large);
  EXPECT_EQ(scan_request("GET / HTTP/1.1\r\nX: " + std::string(900, 'a'), kLimits).state,
            State::incomplete);
}

TEST(RequestHead, BodiesAreBoundedAndMustSayTheirLength) {
  EXPECT_EQ(scan_request("GET / HTTP/1.1\r\nContent-Length: 17\r\n\r\n", kLimits).state,
            State::body_too_large);
  EXPECT_EQ(
      scan_request("GET / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n", kLimits)
          .state,
      State::body_too_large);
  EXPECT_EQ(scan_request("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", kLimits).state,
            State::chunked);
  for (const char* length : {"-1", "+1", "1x", "", "0x10", "1, 2"})
    EXPECT_EQ(scan_request("GET / HTTP/1.1\r\nContent-Length: " + std::string(length) + "\r\n\r\n",
                           kLimits)
                  .state,
              State::bad_length)
        << length;
  EXPECT_EQ(
      scan_request("GET / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 2\r\n\r\nab", kLimits)
          .state,
      State::bad_length);
  EXPECT_EQ(scan_request("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", kLimits).state,
            State::complete);
}

TEST(RequestHead, RangeFieldsAreTakenOutOfTheHeadHandedOn) {
  const std::string head =
      "GET /sweep/a HTTP/1.1\r\nHost: localhost\r\nRange: bytes=0-,0-,0-\r\nrange: bytes=1-2\r\n"
      "If-Range: \"x\"\r\nX-Range: kept\r\n\r\n";
  EXPECT_EQ(without_range_fields(head),
            "GET /sweep/a HTTP/1.1\r\nHost: localhost\r\nX-Range: kept\r\n\r\n");
  EXPECT_EQ(without_range_fields("GET /Range: HTTP/1.1\r\n\r\n"), "GET /Range: HTTP/1.1\r\n\r\n");
}

TEST(RequestHead, EmptyLinesBeforeARequestAndApiPaths) {
  EXPECT_EQ(leading_empty_lines("\r\n\nGET / HTTP/1.1"), 3u);
  EXPECT_EQ(leading_empty_lines("GET / HTTP/1.1"), 0u);
  EXPECT_EQ(leading_empty_lines("\r"), 0u);
  EXPECT_TRUE(asks_for_api("GET /api/sweeps HTTP/1.1\r\n"));
  EXPECT_FALSE(asks_for_api("GET /sweeps HTTP/1.1\r\n"));
  EXPECT_FALSE(asks_for_api("GET"));
}

}  // namespace
}  // namespace sweep::serve
