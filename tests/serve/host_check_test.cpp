// The Host names `sweep serve` answers (host_check.h): literal loopback addresses, localhost and
// --allow-host names, each with an optional port, and nothing that merely looks like them.
#include "sweep/serve/host_check.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sweep::serve {
namespace {

TEST(ServeHosts, OnlyLiteralLoopbackLocalhostAndAllowedNamesAreAnswered) {
  const HostPolicy loopback({}, false);
  for (const char* host :
       {"127.0.0.1", "127.0.0.1:8787", "127.1.2.3:80", "127.255.255.255", "localhost",
        "localhost:8787", "LOCALHOST:1", "[::1]", "[::1]:8787", "[0:0:0:0:0:0:0:1]:8787"})
    EXPECT_TRUE(loopback.allows(host)) << host;
  // Issue 42: "127." was enough before; a DNS name can start with it.
  for (const char* host : {"127.attacker.example",
                           "127.attacker.example:8787",
                           "127.0.0.1.attacker.example",
                           "127.0.0.1.nip.io",
                           "127.0.0",
                           "127.0.0.256",
                           "127.0.0.1.",
                           "localhost.attacker.example",
                           "localhost.",
                           "localhostx",
                           "attacker.example",
                           "[::1",
                           "[127.0.0.1]",
                           "::1",
                           "127.0.0.1:",
                           "127.0.0.1:http",
                           "127.0.0.1:99999",
                           "127.0.0.1:80:80",
                           "",
                           ":8787",
                           "[::1]x",
                           "0x7f.0.0.1",
                           "2130706433",
                           "10.0.0.1",
                           "[::ffff:127.0.0.1]",
                           "[::2]"})
    EXPECT_FALSE(loopback.allows(host)) << host;
}

TEST(ServeHosts, AllowedNamesAnyCaseWithOrWithoutPortAndNothingUnderThem) {
  const HostPolicy policy({"sweep.lan", "192.168.1.5", "[fe80::1]"}, false);
  for (const char* host :
       {"sweep.lan", "SWEEP.LAN:8787", "192.168.1.5:8787", "[fe80::1]:80", "127.0.0.1"})
    EXPECT_TRUE(policy.allows(host)) << host;
  for (const char* host : {"x.sweep.lan", "sweep.lan.attacker.example", "192.168.1.6", "sweep"})
    EXPECT_FALSE(policy.allows(host)) << host;
}

TEST(ServeHosts, BeyondLoopbackAnyLiteralAddressButNoUnlistedName) {
  const HostPolicy policy({}, true);
  for (const char* host : {"192.168.1.5:8787", "10.0.0.1", "[fe80::1]:8787", "localhost"})
    EXPECT_TRUE(policy.allows(host)) << host;
  for (const char* host : {"attacker.example", "my-laptop.lan:8787", "127.attacker.example"})
    EXPECT_FALSE(policy.allows(host)) << host;
}

TEST(ServeHosts, LoopbackNamesAndLiterals) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host(""));
  EXPECT_FALSE(is_loopback_host("127.example"));
  EXPECT_TRUE(is_ip_literal("0.0.0.0"));
  EXPECT_TRUE(is_ip_literal("fe80::1"));
  EXPECT_FALSE(is_ip_literal("sweep.lan"));
}

TEST(ServeHosts, AllowHostTakesANameOrAnAddressWithoutAPort) {
  for (const char* name : {"sweep.lan", "my-laptop", "192.168.1.5", "fe80::1", "[fe80::1]"})
    EXPECT_EQ(allow_host_problem(name), "") << name;
  EXPECT_NE(allow_host_problem("").find("not an empty one"), std::string::npos);
  EXPECT_NE(allow_host_problem("sweep.lan:8787").find("without a port"), std::string::npos);
  for (const char* name : {"a b", "sweep.lan/", ".lan", "x\n", "*"})
    EXPECT_NE(allow_host_problem(name), "") << name;
}

}  // namespace
}  // namespace sweep::serve
