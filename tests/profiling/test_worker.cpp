// The worker protocol and the supervisor: line splitting, shards and device lists, the JSON wire
// format, the worker loop over pipes, and a 20-case sweep through real worker processes in which
// one case aborts its worker and one hangs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "kernels/registry.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/worker/pipe_io.hpp"
#include "profiling/worker/shard.hpp"
#include "profiling/worker/supervisor.hpp"
#include "profiling/worker/worker_loop.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/worker_json.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string attnscope_binary() {
  const char* bin = std::getenv("ATTNSCOPE_BIN");
  return bin ? std::string(bin) : attn::test::cli_binary();
}

Problem small_problem(std::int64_t seq, std::int64_t d) {
  Problem p;
  p.batch = 1;
  p.heads_q = p.heads_kv = 1;
  p.seq_q = p.seq_kv = seq;
  p.head_dim = p.head_dim_v = d;
  p.dtype = DType::fp32;
  return p;
}

Case make_case(const std::string& kernel, const Problem& p, const Knobs& knobs = {}) {
  Case c;
  c.kernel = kernel;
  c.knobs = knobs;
  c.problem = p;
  c.case_id = make_case_id(kernel, knobs, p);
  return c;
}

Protocol tiny_protocol() {
  Protocol p;
  p.warmup_ms = 1;
  p.min_samples = 3;
  p.max_time_s = 0.01;
  return p;
}

TEST(LineSplitter, SplitsAcrossReadsAndKeepsATornTail) {
  LineSplitter s;
  s.feed("ab");
  EXPECT_FALSE(s.next().has_value());
  s.feed("c\nde\n\nf");
  EXPECT_EQ(s.next().value(), "abc");
  EXPECT_EQ(s.next().value(), "de");
  EXPECT_EQ(s.next().value(), "");
  EXPECT_FALSE(s.next().has_value());
  EXPECT_EQ(s.take_rest(), "f");
  EXPECT_TRUE(s.empty());
}

TEST(Shard, ParsesAndRejectsWithTheFlagName) {
  const Shard s = parse_shard("2/4");
  EXPECT_EQ(s.k, 2);
  EXPECT_EQ(s.n, 4);
  EXPECT_EQ(s.text(), "2/4");
  for (const char* bad : {"0/4", "5/4", "1/0", "x/2", "1/", "12", "1/2/3", "-1/2"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const SpecError& e) {
      EXPECT_NE(std::string(e.what()).find("--shard '" + std::string(bad) + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Shard, KeepsProblemsTogetherAndCoversThePlanOnce) {
  std::vector<Case> plan;
  for (std::int64_t seq : {16, 32, 48, 64, 80})
    for (const char* k : {"cpu.reference", "cpu.flash"}) plan.push_back(make_case(k, small_problem(seq, 8)));
  std::vector<int> owner(plan.size(), 0);
  for (int k = 1; k <= 3; ++k)
    for (std::size_t i : shard_indices(plan, Shard{k, 3})) owner[i] += k * 10;
  // Problems 0..4 go to shards 1,2,3,1,2; both kernels of a problem land together.
  const std::vector<int> expected = {10, 10, 20, 20, 30, 30, 10, 10, 20, 20};
  EXPECT_EQ(owner, expected);
  EXPECT_EQ(shard_indices(plan, Shard{1, 1}).size(), plan.size());
}

TEST(Devices, ListsAllAndRejectsBadEntries) {
  EXPECT_EQ(parse_devices("0,2", 0, ""), (std::vector<int>{0, 2}));
  EXPECT_EQ(parse_devices("all", 3, ""), (std::vector<int>{0, 1, 2}));
  for (const char* bad : {"", "a", "0,,1", "-1", "1,1"})
    EXPECT_THROW(parse_devices(bad, 4, ""), SpecError) << bad;
  try {
    parse_devices("all", 0, "no NVIDIA driver");
    ADD_FAILURE();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("no NVIDIA driver"), std::string::npos);
  }
}

TEST(WorkerJson, CaseAndSetupRoundTripAndCaseIdIsChecked) {
  const JsonWorkerCodec codec;
  Case c = make_case("cpu.flash", small_problem(48, 16), {{"block_q", 32}, {"block_k", 64}});
  c.problem.causal = true;
  c.problem.window = {8, 0};
  c.case_id = make_case_id(c.kernel, c.knobs, c.problem);
  const WorkerInput in = codec.decode_input(codec.encode_case(c, std::nullopt));
  ASSERT_TRUE(in.work.has_value());
  EXPECT_FALSE(in.setup.has_value());
  EXPECT_FALSE(in.next_problem.has_value());
  EXPECT_EQ(in.work->case_id, c.case_id);
  EXPECT_EQ(in.work->kernel, "cpu.flash");
  EXPECT_EQ(in.work->knobs, c.knobs);
  EXPECT_TRUE(in.work->problem == c.problem);

  WorkerSetup s;
  s.backend = Backend::cuda;
  s.device = 3;
  s.debug_kernels = true;
  s.protocol.max_time_s = 0.25;
  s.protocol.l2 = L2Mode::warm;
  const WorkerInput back = codec.decode_input(codec.encode_setup(s));
  ASSERT_TRUE(back.setup.has_value());
  EXPECT_EQ(back.setup->backend, Backend::cuda);
  EXPECT_EQ(back.setup->device, 3);
  EXPECT_TRUE(back.setup->debug_kernels);
  EXPECT_DOUBLE_EQ(back.setup->protocol.max_time_s, 0.25);
  EXPECT_EQ(back.setup->protocol.l2, L2Mode::warm);

  // The supervisor's hint of the worker's next problem rides along with the case.
  Problem next = small_problem(96, 32);
  next.causal = true;
  const WorkerInput hinted = codec.decode_input(codec.encode_case(c, next));
  ASSERT_TRUE(hinted.next_problem.has_value());
  EXPECT_TRUE(*hinted.next_problem == next);
  EXPECT_EQ(hinted.work->case_id, c.case_id);
  std::string bad_hint = codec.encode_case(c, next);
  bad_hint.replace(bad_hint.find("\"seq_q\":96"), 10, "\"seq_q\":-1");
  EXPECT_THROW(codec.decode_input(bad_hint), WorkerProtocolError);

  std::string tampered = codec.encode_case(c, std::nullopt);
  tampered.replace(tampered.find("\"seq_q\":48"), 10, "\"seq_q\":49");
  try {
    codec.decode_input(tampered);
    ADD_FAILURE() << "a case whose id does not match its fields was accepted";
  } catch (const WorkerProtocolError& e) {
    EXPECT_NE(std::string(e.what()).find("case.case_id"), std::string::npos) << e.what();
  }
  EXPECT_THROW(codec.decode_input("{\"schema\":\"attnscope.worker.v1\",\"record\":\"nope\"}"),
               WorkerProtocolError);
  EXPECT_THROW(codec.decode_input("not json"), WorkerProtocolError);
}

// The worker loop on pipes, in this process: setup, device record, one result per case, EOF.
struct Pipes {
  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  Pipes() {
    EXPECT_EQ(::pipe(in), 0);
    EXPECT_EQ(::pipe(out), 0);
  }
  ~Pipes() {
    for (int fd : {in[0], in[1], out[0], out[1]})
      if (fd >= 0) ::close(fd);
  }
};

TEST(WorkerLoop, AnswersEveryCaseAfterItsDeviceRecord) {
  const JsonWorkerCodec codec;
  Pipes p;
  WorkerSetup setup;
  setup.backend = Backend::cpu;
  setup.protocol = tiny_protocol();
  const Case a = make_case("cpu.flash", small_problem(32, 16), default_knobs(*find_kernel("cpu.flash")));
  const Case b = make_case("cpu.reference", small_problem(16, 8));
  const std::string input = codec.encode_setup(setup) + "\n" + codec.encode_case(a, b.problem) + "\n\n" +
                            codec.encode_case(b, std::nullopt) + "\n";
  write_all(p.in[1], input, "test");
  ::close(p.in[1]);
  p.in[1] = -1;
  int rc = -1;
  std::FILE* log = std::tmpfile();
  std::thread worker([&] { rc = run_worker(p.in[0], p.out[1], codec, WorkerSetup{}, false, log); });
  worker.join();
  std::fclose(log);
  ::close(p.out[1]);
  p.out[1] = -1;
  EXPECT_EQ(rc, kWorkerExitDone);
  LineSplitter lines;
  std::vector<std::string> out;
  while (auto line = read_line(p.out[0], lines, "test")) out.push_back(*line);
  ASSERT_EQ(out.size(), 3u);
  const RunInfo device = codec.decode_device(out[0]);
  EXPECT_EQ(device.backend, "cpu");
  EXPECT_DOUBLE_EQ(device.protocol.max_time_s, 0.01);
  const CaseResult ra = codec.decode_result(out[1]);
  const CaseResult rb = codec.decode_result(out[2]);
  EXPECT_EQ(ra.case_id, a.case_id);
  EXPECT_EQ(ra.status, Status::ok) << ra.reason;
  EXPECT_EQ(rb.case_id, b.case_id);
  EXPECT_EQ(rb.status, Status::ok) << rb.reason;
}

TEST(WorkerLoop, RejectsALineThatIsNotProtocolWithExitTwo) {
  const JsonWorkerCodec codec;
  Pipes p;
  WorkerSetup setup;
  setup.protocol = tiny_protocol();
  write_all(p.in[1],
            codec.encode_setup(setup) + "\n{\"schema\":\"attnscope.worker.v1\",\"record\":\"case\"}\n",
            "test");
  ::close(p.in[1]);
  p.in[1] = -1;
  std::FILE* log = std::tmpfile();
  const int rc = run_worker(p.in[0], p.out[1], codec, WorkerSetup{}, false, log);
  std::rewind(log);
  char buf[512] = {};
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, log);
  std::fclose(log);
  EXPECT_EQ(rc, kWorkerExitBadInput);
  EXPECT_NE(std::string(buf, n).find("stdin line 2: case.case_id: required field is missing"),
            std::string::npos)
      << std::string(buf, n);
}

// Collects what the supervisor reports, writing results.jsonl as `run` does.
class Recorder final : public SupervisorEvents {
 public:
  explicit Recorder(fs::path file) : m_file(std::move(file)) {}
  void worker_started(std::size_t, pid_t) override { ++starts; }
  void worker_ready(std::size_t, const RunInfo& device) override {
    if (!writer) writer.emplace(JsonlWriter::create(m_file, device, true));
  }
  void case_finished(std::size_t index, CaseResult r) override {
    writer->append(r);
    order.push_back(index);
  }
  fs::path m_file;
  std::optional<JsonlWriter> writer;
  std::vector<std::size_t> order;
  int starts = 0;
};

TEST(Supervisor, TwentyCasesSurviveAnAbortAndAHang) {
  // 18 ok cases (two kernels x nine problems) with debug.fault at position 5 and debug.hang at 13.
  std::vector<Case> cases;
  for (std::int64_t seq : {16, 32, 48})
    for (std::int64_t d : {8, 16, 32})
      for (const char* k : {"cpu.reference", "cpu.flash"}) {
        const KernelSpec* spec = find_kernel(k);
        cases.push_back(make_case(k, small_problem(seq, d), default_knobs(*spec)));
      }
  cases.insert(cases.begin() + 5, make_case("debug.fault", small_problem(32, 16)));
  cases.insert(cases.begin() + 13, make_case("debug.hang", small_problem(32, 16)));
  ASSERT_EQ(cases.size(), 20u);
  std::vector<std::size_t> pending(cases.size());
  for (std::size_t i = 0; i < pending.size(); ++i) pending[i] = i;

  SupervisorOptions options;
  WorkerSlot slot;
  slot.launch.argv = {attnscope_binary(), "worker"};
  slot.setup.backend = Backend::cpu;
  slot.setup.protocol = tiny_protocol();
  slot.setup.debug_kernels = true;
  slot.label = "w0";
  options.slots = {slot};
  options.case_timeout_s = 3;
  const fs::path file = fs::path(::testing::TempDir()) / "attnscope_supervisor_20.jsonl";
  Recorder rec(file);
  const JsonWorkerCodec codec;
  const SupervisorSummary s = supervise(cases, pending, options, codec, rec);
  rec.writer->close();

  EXPECT_EQ(s.finished, 20u);
  EXPECT_EQ(s.faults, 1u);
  EXPECT_EQ(s.timeouts, 1u);
  EXPECT_TRUE(s.not_run.empty());
  EXPECT_TRUE(s.errors.empty());
  EXPECT_EQ(rec.starts, 3);  // the first worker, then one after the abort and one after the kill
  const LoadedRun run = read_results(file);
  EXPECT_TRUE(run.warnings.empty());
  ASSERT_EQ(run.cases.size(), 20u);
  std::map<std::string, int> lines_per_case;
  for (std::size_t i = 0; i < run.cases.size(); ++i) {
    const CaseResult& r = run.cases[i];
    ++lines_per_case[r.case_id];
    EXPECT_EQ(r.case_id, cases[i].case_id);  // one worker: results in hand-out order
    if (r.kernel == "debug.fault") {
      EXPECT_EQ(r.status, Status::fault);
      EXPECT_NE(r.reason.find("SIGABRT"), std::string::npos) << r.reason;
    } else if (r.kernel == "debug.hang") {
      EXPECT_EQ(r.status, Status::timeout);
      EXPECT_NE(r.reason.find("--case-timeout 3 s"), std::string::npos) << r.reason;
      EXPECT_GE(r.wall_s, 3.0);
    } else {
      EXPECT_EQ(r.status, Status::ok) << r.kernel << " " << r.reason;
      EXPECT_TRUE(r.timing.has_value());
    }
  }
  EXPECT_EQ(lines_per_case.size(), 20u);
}

TEST(Supervisor, ACaseHandedToAWorkerThatLostItsDeviceGoesToTheNextWorker) {
  // A stand-in for a CUDA worker after a sticky fault: it answers one case, then leaves with
  // kWorkerExitContextLost without reading on. The supervisor has handed it the next case by
  // then (the sleep makes sure); that case never ran and must not be recorded as a fault.
  const JsonWorkerCodec codec;
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_fake_worker";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<Case> cases = {make_case("cpu.reference", small_problem(16, 8)),
                                   make_case("cpu.reference", small_problem(32, 8))};
  RunInfo device;
  device.backend = "cuda";
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CaseResult r;
    r.case_id = cases[i].case_id;
    r.kernel = cases[i].kernel;
    r.problem = cases[i].problem;
    r.status = i == 0 ? Status::fault : Status::ok;
    r.reason = i == 0 ? "cudaErrorIllegalAddress: (stand-in)" : "";
    std::FILE* f = std::fopen((dir / ("result" + std::to_string(i))).c_str(), "w");
    std::fprintf(f, "%s\n", codec.encode_result(r).c_str());
    std::fclose(f);
  }
  std::FILE* f = std::fopen((dir / "device").c_str(), "w");
  std::fprintf(f, "%s\n", codec.encode_device(device).c_str());
  std::fclose(f);
  const std::string d = dir.string();
  SupervisorOptions options;
  WorkerSlot slot;
  slot.launch.shell_command = "cd '" + d +
                              "' && n=$(cat count 2>/dev/null || echo 0) && echo $((n+1)) > count && "
                              "read setup && cat device && read work && cat result$n && sleep 0.3 && exit 3";
  slot.label = "fake";
  options.slots = {slot};
  options.case_timeout_s = 20;
  Recorder rec(dir / "results.jsonl");
  const SupervisorSummary s = supervise(cases, {0, 1}, options, codec, rec);
  EXPECT_EQ(s.finished, 2u);
  EXPECT_EQ(s.faults, 0u);  // the worker's own fault record is not a supervisor-made one
  EXPECT_EQ(s.worker_starts, 2u);
  EXPECT_TRUE(s.not_run.empty());
  rec.writer->close();
  const LoadedRun run = read_results(dir / "results.jsonl");
  ASSERT_EQ(run.cases.size(), 2u);
  EXPECT_EQ(run.cases[0].status, Status::fault);
  EXPECT_EQ(run.cases[1].case_id, cases[1].case_id);
  EXPECT_EQ(run.cases[1].status, Status::ok) << run.cases[1].reason;
}

// The case lines name the problem the worker is expected to take next, only on the last case of a
// problem (CaseEngine::expect_next): read back from what a real worker was sent.
TEST(Supervisor, TheLastCaseOfAProblemNamesTheNextProblem) {
  const fs::path dir = fs::path(::testing::TempDir()) / "attnscope_next_problem";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Problem a = small_problem(16, 8), b = small_problem(32, 8);
  std::vector<Case> cases;
  for (const Problem& p : {a, b})
    for (const char* k : {"cpu.reference", "cpu.flash"})
      cases.push_back(make_case(k, p, default_knobs(*find_kernel(k))));
  SupervisorOptions options;
  WorkerSlot slot;
  slot.launch.shell_command = "tee '" + (dir / "stdin").string() + "' | '" + attnscope_binary() + "' worker";
  slot.setup.backend = Backend::cpu;
  slot.setup.protocol = tiny_protocol();
  slot.label = "teed";
  options.slots = {slot};
  options.case_timeout_s = 20;
  const JsonWorkerCodec codec;
  Recorder rec(dir / "results.jsonl");
  const SupervisorSummary s = supervise(cases, {0, 1, 2, 3}, options, codec, rec);
  rec.writer->close();
  EXPECT_EQ(s.finished, 4u);
  std::ifstream in(dir / "stdin");
  std::vector<WorkerInput> sent;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) sent.push_back(codec.decode_input(line));
  ASSERT_EQ(sent.size(), 5u);  // the setup, then the four cases in plan order
  EXPECT_TRUE(sent[0].setup.has_value());
  for (std::size_t i = 1; i < sent.size(); ++i) {
    ASSERT_TRUE(sent[i].work.has_value());
    EXPECT_EQ(sent[i].work->case_id, cases[i - 1].case_id);
    if (i == 2) {
      ASSERT_TRUE(sent[i].next_problem.has_value()) << "the last case of the first problem";
      EXPECT_TRUE(*sent[i].next_problem == b);
    } else {
      EXPECT_FALSE(sent[i].next_problem.has_value()) << "case " << i - 1;
    }
  }
}

TEST(Supervisor, GivesUpOnAWorkerCommandThatNeverStarts) {
  std::vector<Case> cases = {make_case("cpu.reference", small_problem(16, 8))};
  SupervisorOptions options;
  WorkerSlot slot;
  slot.launch.shell_command = "echo 'no such host' >&2; exit 7";
  slot.label = "w0";
  options.slots = {slot};
  options.max_start_failures = 2;
  Recorder rec(fs::path(::testing::TempDir()) / "attnscope_never.jsonl");
  const JsonWorkerCodec codec;
  const SupervisorSummary s = supervise(cases, {0}, options, codec, rec);
  EXPECT_EQ(s.finished, 0u);
  EXPECT_EQ(s.worker_starts, 2u);
  EXPECT_EQ(s.not_run, (std::vector<std::size_t>{0}));
  ASSERT_EQ(s.errors.size(), 1u);
  EXPECT_NE(s.errors[0].find("exited with code 7"), std::string::npos) << s.errors[0];
  EXPECT_NE(s.errors[0].find("no such host"), std::string::npos) << s.errors[0];
}

}  // namespace
}  // namespace attn
