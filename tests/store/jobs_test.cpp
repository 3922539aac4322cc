// The background queue: priority order, leases, heartbeats, expiry and reclaim, finish, cancel.
#include <gmock/gmock.h>

#include "store_test_util.h"

namespace sweep::test {
namespace {

using namespace std::chrono_literals;

JobSpec job_spec(std::string name, std::int64_t priority = 0, std::int64_t max_attempts = 3) {
  return {.config_path = "configs/" + name + ".yaml",
          .config_yaml = "name: " + name,
          .priority = priority,
          .max_attempts = max_attempts};
}

TEST(StoreJobs, EnqueueRoundTripAndClaimOrder) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto low = store.enqueue_job(job_spec("low", 0));
  const auto high = store.enqueue_job(job_spec("high", 5));
  const auto low2 = store.enqueue_job(job_spec("low2", 0));
  const auto row = store.job(high);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->config_path, "configs/high.yaml");
  EXPECT_EQ(row->config_yaml, "name: high");
  EXPECT_EQ(row->priority, 5);
  EXPECT_EQ(row->state, JobState::queued);
  EXPECT_EQ(row->max_attempts, 3);
  EXPECT_FALSE(row->sweep_id.has_value());
  EXPECT_THROW(store.enqueue_job({.config_yaml = ""}), Error);
  EXPECT_THROW(store.enqueue_job(job_spec("x", 0, 0)), Error);

  std::vector<std::int64_t> order;
  while (auto j = store.claim_next_job("host:1:0", 60s)) {
    EXPECT_EQ(j->state, JobState::running);
    EXPECT_EQ(j->lease_owner, "host:1:0");
    EXPECT_EQ(j->attempts, 1);
    ASSERT_TRUE(j->lease_expires_at && j->heartbeat_at);
    EXPECT_NEAR(*j->lease_expires_at - *j->heartbeat_at, 60.0, 1e-6);
    order.push_back(j->id);
  }
  EXPECT_THAT(order, ::testing::ElementsAre(high, low, low2));
  EXPECT_THROW(store.claim_next_job("", 1s), Error);
}

TEST(StoreJobs, HeartbeatAndFinishNeedTheLease) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto id = store.enqueue_job(job_spec("a"));
  const auto claimed = store.claim_next_job("w1", 10s);
  ASSERT_TRUE(claimed.has_value());
  EXPECT_TRUE(store.heartbeat_job(id, "w1", 100s));
  EXPECT_GT(*store.job(id)->lease_expires_at, *claimed->lease_expires_at);
  EXPECT_FALSE(store.heartbeat_job(id, "w2", 100s)) << "a stranger renewed someone's lease";
  EXPECT_FALSE(store.finish_job(id, "w2", JobState::done, 0));
  EXPECT_THROW(store.finish_job(id, "w1", JobState::queued, 0), Error);

  EXPECT_TRUE(store.finish_job(id, "w1", JobState::failed, 3, "trainer exited with 3"));
  const auto done = store.job(id);
  EXPECT_EQ(done->state, JobState::failed);
  EXPECT_EQ(done->exit_code, 3);
  EXPECT_EQ(done->error, "trainer exited with 3");
  EXPECT_TRUE(done->finished_at.has_value());
  EXPECT_FALSE(store.heartbeat_job(id, "w1", 10s)) << "heartbeat on a finished job";
  EXPECT_FALSE(store.finish_job(id, "w1", JobState::done, 0)) << "finished twice";
}

// A lost worker's job goes back to the queue however often it was lost: whether to give it up is
// for the worker that claims it next, which can see which trials the losses hit
// (sweep/queue/crash_recovery.h); a count of claims cannot tell one trial that keeps killing its
// worker from several trials hit once each.
TEST(StoreJobs, ExpiredLeasesAreRequeuedAndCountedAsClaims) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto id = store.enqueue_job(job_spec("flaky", 0, 2));
  const auto keep = store.enqueue_job(job_spec("healthy", -1));

  ASSERT_EQ(store.claim_next_job("dead-worker", 5s)->id, id);
  const double now = utc_now();
  EXPECT_TRUE(store.reclaim_expired_jobs(now).empty()) << "reclaimed a live lease";
  EXPECT_THAT(store.reclaim_expired_jobs(now + 10), ::testing::ElementsAre(id));
  auto row = store.job(id);
  EXPECT_EQ(row->state, JobState::queued);
  EXPECT_EQ(row->lease_owner, "");
  EXPECT_FALSE(row->lease_expires_at.has_value());
  EXPECT_FALSE(store.heartbeat_job(id, "dead-worker", 5s)) << "the lost lease was renewed";
  EXPECT_FALSE(store.finish_job(id, "dead-worker", JobState::done, 0));

  for (int claim = 2; claim <= 5; ++claim) {  // past max_attempts (2): still requeued
    const auto again = store.claim_next_job("worker-" + std::to_string(claim), 5s);
    ASSERT_EQ(again->id, id);
    EXPECT_EQ(again->attempts, claim);
    EXPECT_THAT(store.reclaim_expired_jobs(utc_now() + 10), ::testing::ElementsAre(id));
    row = store.job(id);
    EXPECT_EQ(row->state, JobState::queued) << "claim " << claim;
    EXPECT_EQ(row->error, "");
    EXPECT_FALSE(row->finished_at.has_value());
  }
  ASSERT_EQ(store.claim_next_job("worker-6", 5s)->id, id);
  EXPECT_TRUE(store.finish_job(id, "worker-6", JobState::failed, 1, "gave up"));

  // The other job was never touched.
  EXPECT_EQ(store.job(keep)->state, JobState::queued);
  EXPECT_EQ(store.claim_next_job("worker-3", 5s)->id, keep);
}

// A worker that stops cleanly hands its job back at once; the attempt its claim counted is given
// back to the budget, so clean restarts never fail a job. Only the holder can release it.
TEST(StoreJobs, ReleaseRequeuesWithoutSpendingAnAttempt) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto id = store.enqueue_job(job_spec("long", 0, 2));
  for (int restart = 1; restart <= 5; ++restart) {
    const auto claimed = store.claim_next_job("worker-" + std::to_string(restart), 60s);
    ASSERT_TRUE(claimed);
    ASSERT_EQ(claimed->id, id);
    EXPECT_EQ(claimed->attempts, restart);
    EXPECT_FALSE(store.release_job(id, "someone-else")) << "released by a worker not holding it";
    EXPECT_TRUE(store.release_job(id, "worker-" + std::to_string(restart)));
    const auto row = store.job(id);
    EXPECT_EQ(row->state, JobState::queued);
    EXPECT_EQ(row->lease_owner, "");
    EXPECT_FALSE(row->lease_expires_at.has_value());
    EXPECT_EQ(row->max_attempts, 2 + restart) << "each clean hand-back refunds its attempt";
    EXPECT_FALSE(store.release_job(id, "worker-" + std::to_string(restart))) << "not running";
  }
  // An expired lease spends an attempt: a crash is not a clean stop (the budget stays).
  ASSERT_TRUE(store.claim_next_job("crashing", 1s));
  EXPECT_THAT(store.reclaim_expired_jobs(utc_now() + 10), ::testing::ElementsAre(id));
  EXPECT_EQ(store.job(id)->state, JobState::queued);
  EXPECT_EQ(store.job(id)->attempts, 6);
  EXPECT_EQ(store.job(id)->max_attempts, 7);
}

TEST(StoreJobs, CancelQueuedOrRunningOnly) {
  TempDir dir;
  Store store(dir / "sweep.db");
  const auto queued = store.enqueue_job(job_spec("q"));
  const auto running = store.enqueue_job(job_spec("r", -1));
  ASSERT_EQ(store.claim_next_job("w", 60s)->id, queued);
  EXPECT_TRUE(store.cancel_job(running));  // queued -> cancelled
  EXPECT_TRUE(store.cancel_job(queued));   // running -> cancelled
  EXPECT_FALSE(store.heartbeat_job(queued, "w", 60s)) << "the worker must learn it was cancelled";
  EXPECT_FALSE(store.cancel_job(queued));
  EXPECT_FALSE(store.claim_next_job("w", 60s).has_value());
  const auto all = store.jobs();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].state, JobState::cancelled);
  EXPECT_EQ(all[1].state, JobState::cancelled);
}

}  // namespace
}  // namespace sweep::test
