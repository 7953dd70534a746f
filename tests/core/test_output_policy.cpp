// core/output_policy.hpp: what --force may replace, one row per
// kind of thing that can be in the way.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "syncscope/core/error.hpp"
#include "syncscope/core/file_io.hpp"
#include "syncscope/core/output_policy.hpp"
#include "test_paths.hpp"

using namespace syncscope;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path& p, const std::string& content = "x") { std::ofstream(p) << content; }

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The message of the InputError f throws ("" when it throws none).
template <typename F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---- output files ---------------------------------------------------------------------

struct FileCase {
  const char* name;
  // Sets up what is at dir/"out" (or elsewhere) and returns the path to write.
  std::function<fs::path(const fs::path& dir)> setup;
  bool force;
  const char* refused;  // substring of the error; nullptr: accepted
  bool stream;          // accepted and written straight through
};

class OutputFileTable : public ::testing::TestWithParam<FileCase> {};

TEST_P(OutputFileTable, PlanAndWrite) {
  const FileCase& c = GetParam();
  test::TempDir dir;
  const fs::path p = c.setup(dir.path());
  if (c.refused) {
    const std::string err = input_error([&] { plan_output_file(p, c.force); });
    EXPECT_NE(err.find(c.refused), std::string::npos) << c.name << ": " << err;
    // write_file_atomic applies the same rule and leaves what is there alone.
    const PathKind before = path_kind(p);
    EXPECT_THROW(write_file_atomic(p, "new", c.force), InputError) << c.name;
    EXPECT_EQ(path_kind(p), before) << c.name;
    return;
  }
  const OutputFile plan = plan_output_file(p, c.force);
  EXPECT_EQ(plan.stream, c.stream) << c.name;
}

const FileCase kFileCases[] = {
    {"missing file", [](const fs::path& d) { return d / "out.json"; }, false, nullptr, false},
    {"regular file without --force",
     [](const fs::path& d) {
       touch(d / "out.json");
       return d / "out.json";
     },
     false, "already exists", false},
    {"regular file with --force",
     [](const fs::path& d) {
       touch(d / "out.json");
       return d / "out.json";
     },
     true, nullptr, false},
    {"directory",
     [](const fs::path& d) {
       fs::create_directory(d / "out");
       return d / "out";
     },
     true, "a directory is never replaced by a file", false},
    {"empty directory without --force",
     [](const fs::path& d) {
       fs::create_directory(d / "out");
       return d / "out";
     },
     false, "is a directory", false},
    {"missing directory", [](const fs::path& d) { return d / "no" / "out.json"; }, true, "does not exist", false},
    {"parent is a file",
     [](const fs::path& d) {
       touch(d / "f");
       return d / "f" / "out.json";
     },
     true, "not a directory", false},
    {"FIFO",
     [](const fs::path& d) {
       ::mkfifo((d / "p").c_str(), 0600);
       return d / "p";
     },
     false, nullptr, true},
    {"/dev/null", [](const fs::path&) { return fs::path("/dev/null"); }, false, nullptr, true},
    {"-", [](const fs::path&) { return fs::path("-"); }, false, nullptr, true},
    {"/dev/stdout", [](const fs::path&) { return fs::path("/dev/stdout"); }, false, nullptr, true},
    {"socket",
     [](const fs::path& d) {
       const fs::path p = d / "s";
       int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
       sockaddr_un a{};
       a.sun_family = AF_UNIX;
       std::snprintf(a.sun_path, sizeof a.sun_path, "%s", p.c_str());
       (void)::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
       ::close(fd);
       return p;
     },
     true, "a socket", false},
    {"symlink to a regular file without --force",
     [](const fs::path& d) {
       touch(d / "real.json");
       fs::create_symlink("real.json", d / "link.json");
       return d / "link.json";
     },
     false, "already exists", false},
    {"symlink to a directory",
     [](const fs::path& d) {
       fs::create_directory(d / "realdir");
       fs::create_symlink("realdir", d / "link");
       return d / "link";
     },
     true, "a directory is never replaced", false},
    {"symlink loop",
     [](const fs::path& d) {
       fs::create_symlink("b", d / "a");
       fs::create_symlink("a", d / "b");
       return d / "a";
     },
     true, "too many levels of symbolic links", false},
    {"symlink to a FIFO",
     [](const fs::path& d) {
       ::mkfifo((d / "p").c_str(), 0600);
       fs::create_symlink("p", d / "link");
       return d / "link";
     },
     false, nullptr, true},
};

template <typename Row>
std::string row_name(const ::testing::TestParamInfo<Row>& row) {
  std::string n = row.param.name;
  for (auto& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Kinds, OutputFileTable, ::testing::ValuesIn(kFileCases), row_name<FileCase>);

TEST(OutputFile, ForcedWriteThroughASymlinkReplacesTheTargetAndKeepsTheLink) {
  test::TempDir dir;
  touch(dir / "real.json", "old");
  fs::create_symlink("real.json", dir / "link.json");
  write_file_atomic(dir / "link.json", "new", /*overwrite=*/true);
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(slurp(dir / "real.json"), "new");
}

TEST(OutputFile, DanglingSymlinkCreatesItsTarget) {
  test::TempDir dir;
  fs::create_symlink("made.json", dir / "link.json");
  write_file_atomic(dir / "link.json", "content");
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(slurp(dir / "made.json"), "content");
}

TEST(OutputFile, DevNullStaysACharacterDevice) {
  // `convert t.json.gz /dev/null --force` once turned /dev/null into a regular file. We do
  // not own /dev; writing must go through the device, with or without --force.
  write_file_atomic("/dev/null", std::string(100000, 'x'), /*overwrite=*/true);
  write_file_atomic("/dev/null", "y");
  EXPECT_EQ(path_kind("/dev/null"), PathKind::CharDevice);
}

TEST(OutputFile, FifoIsWrittenStraightThroughPlainAndGzip) {
  for (const char* name : {"p.json", "p.json.gz"}) {
    test::TempDir dir;
    const fs::path fifo = dir / name;
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::string got;
    std::thread reader([&] { got = read_file(fifo); });  // read_file gunzips what starts with the magic
    write_file_atomic(fifo, std::string(300000, 'f'));
    reader.join();
    EXPECT_EQ(got, std::string(300000, 'f')) << name;
    EXPECT_EQ(path_kind(fifo), PathKind::Fifo) << name << " was replaced";
  }
}

TEST(OutputFile, WritesToAnOpenDescriptorPath) {
  test::TempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const fs::path p = "/dev/fd/" + std::to_string(fds[1]);
  std::string got;
  std::thread reader([&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  });
  write_file_atomic(p, "through the descriptor");
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  EXPECT_EQ(got, "through the descriptor");
}

// ---- run directories --------------------------------------------------------------------

namespace {

OwnedDirRules rules() {
  OwnedDirRules r;
  r.marker = "results.json";
  r.marker_is_ours = [](const fs::path& p) { return slurp(p).find("\"schema_version\"") != std::string::npos; };
  r.allowed = {"results.json", "results.csv", "report.html", "traces", "traces/*.json.gz"};
  return r;
}

void make_ours(const fs::path& d) {
  fs::create_directories(d / "traces");
  touch(d / "results.json", "{\"schema_version\": 1}");
  touch(d / "results.csv");
  touch(d / "traces" / "a.json.gz");
}

}  // namespace

struct DirCase {
  const char* name;
  std::function<fs::path(const fs::path& dir)> setup;
  bool force;
  const char* refused;  // nullptr: accepted
};

class OutputDirTable : public ::testing::TestWithParam<DirCase> {};

TEST_P(OutputDirTable, Plan) {
  const DirCase& c = GetParam();
  test::TempDir dir;
  const fs::path p = c.setup(dir.path());
  const std::string err = input_error([&] { plan_output_dir(p, c.force, rules()); });
  if (c.refused) {
    EXPECT_NE(err.find(c.refused), std::string::npos) << c.name << ": " << err;
  } else {
    EXPECT_EQ(err, "") << c.name;
  }
}

const DirCase kDirCases[] = {
    {"missing", [](const fs::path& d) { return d / "res"; }, false, nullptr},
    {"ours without --force",
     [](const fs::path& d) {
       make_ours(d / "res");
       return d / "res";
     },
     false, "exists"},
    {"ours with --force",
     [](const fs::path& d) {
       make_ours(d / "res");
       return d / "res";
     },
     true, nullptr},
    {"ours with a trailing slash",
     [](const fs::path& d) {
       make_ours(d / "res");
       return fs::path((d / "res").string() + "/");
     },
     true, nullptr},
    {"a user's directory",
     [](const fs::path& d) {
       fs::create_directories(d / "notarun" / "sub");
       touch(d / "notarun" / "sub" / "important.txt");
       return d / "notarun";
     },
     true, "not a syncscope results directory"},
    {"an empty directory",
     [](const fs::path& d) {
       fs::create_directory(d / "res");
       return d / "res";
     },
     true, "not a syncscope results directory"},
    {"ours plus the user's notes",
     [](const fs::path& d) {
       make_ours(d / "res");
       touch(d / "res" / "notes.txt");
       return d / "res";
     },
     true, "notes.txt"},
    {"ours plus a file among the traces",
     [](const fs::path& d) {
       make_ours(d / "res");
       touch(d / "res" / "traces" / "keep.txt");
       return d / "res";
     },
     true, "traces/keep.txt"},
    {"a results.json that is not ours",
     [](const fs::path& d) {
       fs::create_directory(d / "res");
       touch(d / "res" / "results.json", "[1, 2]");
       return d / "res";
     },
     true, "not a syncscope results directory"},
    {"a regular file",
     [](const fs::path& d) {
       touch(d / "res");
       return d / "res";
     },
     true, "a regular file"},
    {"the current directory holding a scenario",
     [](const fs::path& d) {
       make_ours(d);
       touch(d / "scenario.yaml");
       return d / ".";
     },
     true, "scenario.yaml"},
    {"a symlink to a user's directory",
     [](const fs::path& d) {
       fs::create_directory(d / "home");
       touch(d / "home" / "a.txt");
       fs::create_directory_symlink("home", d / "res");
       return d / "res";
     },
     true, "not a syncscope results directory"},
};

INSTANTIATE_TEST_SUITE_P(Kinds, OutputDirTable, ::testing::ValuesIn(kDirCases), row_name<DirCase>);

TEST(OutputDir, PublishReplacesOurRunThroughASymlinkAndKeepsTheLink) {
  test::TempDir dir;
  make_ours(dir / "real");
  touch(dir / "real" / "results.csv", "old");
  fs::create_directory_symlink("real", dir / "res");
  const OutputDir out = plan_output_dir(dir / "res", true, rules());
  EXPECT_EQ(out.target, dir / "real");
  const fs::path partial = make_partial_dir(out.target);
  EXPECT_TRUE(fs::exists(partial / kPartialMarker));
  EXPECT_NE(partial.filename().string().find(".partial-" + std::to_string(::getpid()) + "-"), std::string::npos);
  touch(partial / "results.json", "{\"schema_version\": 1}");
  touch(partial / "results.csv", "new");
  publish_partial_dir(partial, out, true, rules());
  EXPECT_TRUE(fs::is_symlink(dir / "res"));
  EXPECT_EQ(slurp(dir / "real" / "results.csv"), "new");
  EXPECT_FALSE(fs::exists(dir / "real" / kPartialMarker));
  EXPECT_FALSE(fs::exists(dir / "real" / "traces")) << "the old results are gone, not merged";
  EXPECT_FALSE(fs::exists(partial));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".old-"), std::string::npos) << e.path();
}

TEST(OutputDir, PublishRechecksATargetThatChangedMeanwhile) {
  test::TempDir dir;
  make_ours(dir / "res");
  const OutputDir out = plan_output_dir(dir / "res", true, rules());
  const fs::path partial = make_partial_dir(out.target);
  touch(partial / "results.json", "{\"schema_version\": 1}");
  touch(dir / "res" / "added-meanwhile.txt");
  EXPECT_THROW(publish_partial_dir(partial, out, true, rules()), InputError);
  EXPECT_TRUE(fs::exists(dir / "res" / "added-meanwhile.txt"));
  EXPECT_TRUE(fs::exists(partial / "results.json"));
}

TEST(OutputDir, PublishDoesNotReplaceADirectoryCreatedMeanwhile) {
  test::TempDir dir;
  const OutputDir out = plan_output_dir(dir / "res", false, rules());
  const fs::path partial = make_partial_dir(out.target);
  fs::create_directory(dir / "res");
  touch(dir / "res" / "theirs.txt");
  EXPECT_THROW(publish_partial_dir(partial, out, false, rules()), InputError);
  EXPECT_TRUE(fs::exists(dir / "res" / "theirs.txt"));
  EXPECT_TRUE(fs::exists(partial / kPartialMarker)) << "a partial directory that was not published keeps its marker";
}

TEST(OutputDir, AbandonRemovesAnEmptyPartialAndKeepsOneWithFiles) {
  test::TempDir dir;
  const fs::path empty = make_partial_dir(dir / "res");
  fs::create_directories(empty / "traces");
  EXPECT_FALSE(abandon_partial_dir(empty));
  EXPECT_FALSE(fs::exists(empty));
  const fs::path full = make_partial_dir(dir / "res");
  touch(full / "results.json");
  EXPECT_TRUE(abandon_partial_dir(full));
  EXPECT_TRUE(fs::exists(full / "results.json"));
}

// ---- stale partial directories -----------------------------------------------------------

namespace {

// The pid of a process that has exited (and been reaped).
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// A partial directory as another process would have made it, with our marker's text
// changed as `edit` says.
fs::path fake_partial(const fs::path& target, const std::string& suffix,
                      const std::function<std::string(std::string)>& edit) {
  const fs::path real = make_partial_dir(target);
  const std::string text = edit(slurp(real / kPartialMarker));
  const fs::path p = target.parent_path() / (target.filename().string() + ".partial-" + suffix);
  fs::rename(real, p);
  touch(p / kPartialMarker, text);
  touch(p / "results.json", "{}");
  return p;
}

std::string replace_line(std::string text, const std::string& key, const std::string& value) {
  const auto a = text.find("\n" + key + " ");
  if (a == std::string::npos) return text;
  const auto b = text.find('\n', a + 1);
  return text.substr(0, a + 1) + key + " " + value + text.substr(b);
}

}  // namespace

TEST(StalePartials, RemovesThoseOfDeadRunsOnThisHostOnly) {
  test::TempDir dir;
  const fs::path target = dir / "res";
  const std::string dead = std::to_string(dead_pid());
  const fs::path stale =
      fake_partial(target, dead + "-aaaaaa", [&](std::string t) { return replace_line(t, "pid", dead); });
  const fs::path reused = fake_partial(target, "1-bbbbbb", [&](std::string t) {
    return replace_line(t, "start", "12345");
  });  // our pid, other start
  const fs::path rebooted = fake_partial(target, dead + "-cccccc", [&](std::string t) {
    return replace_line(replace_line(t, "pid", std::to_string(::getpid())), "boot", "another-boot");
  });
  const fs::path live = fake_partial(target, "live-dddddd", [](std::string t) { return t; });
  const fs::path other_host = fake_partial(target, dead + "-eeeeee", [&](std::string t) {
    return replace_line(replace_line(t, "pid", dead), "host", "some-other-node");
  });
  fs::create_directories(dir / "res.partial-users-own");  // no marker: not ours
  touch(dir / "res.partial-users-own" / "x.txt");
  std::vector<std::string> lines;
  const auto removed = remove_stale_partial_dirs(target, [&](const std::string& l) { lines.push_back(l); });
  EXPECT_EQ(removed.size(), 3u);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(reused));
  EXPECT_FALSE(fs::exists(rebooted));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other_host));
  EXPECT_TRUE(fs::exists(dir / "res.partial-users-own" / "x.txt"));
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& l : lines) EXPECT_NE(l.find("removed the stale partial directory"), std::string::npos) << l;
}
