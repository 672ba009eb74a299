// File helpers: appends that leave no torn line when the disk fills, and the removal of temporary entries that
// killed writers left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "support/test_support.hpp"
#include "trex/base/error.hpp"
#include "trex/base/files.hpp"

namespace fs = std::filesystem;

namespace {

// A file-size limit on this process (what a full disk looks like to write(): EFBIG instead of ENOSPC, and the same
// short writes), with SIGXFSZ ignored; both restored at the end of the scope.
class file_size_limit {
   public:
    explicit file_size_limit(rlim_t bytes) {
        getrlimit(RLIMIT_FSIZE, &saved_);
        old_handler_ = signal(SIGXFSZ, SIG_IGN);
        rlimit lim = saved_;
        lim.rlim_cur = bytes;
        setrlimit(RLIMIT_FSIZE, &lim);
    }
    ~file_size_limit() {
        setrlimit(RLIMIT_FSIZE, &saved_);
        signal(SIGXFSZ, old_handler_);
    }

   private:
    rlimit saved_{};
    sighandler_t old_handler_ = SIG_DFL;
};

// A pid that no process has now: a child that exited and was reaped.
pid_t dead_pid() {
    const pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, nullptr, 0);
    return p;
}

}  // namespace

TEST(Files, AppendThatDoesNotFitLeavesNoTornLine) {
    const std::string path = trex::test::scratch_dir("files_append") + "/metrics.jsonl";
    const std::string line(100, 'x');  // 101 bytes with its newline
    std::string error;
    int written = 0;
    {
        trex::line_appender out(path);
        const file_size_limit limit(1000);  // room for 9 lines and part of a 10th
        for (int i = 0; i < 20 && error.empty(); i++) {
            error = trex::test::error_of([&] { out.append(line); });
            if (error.empty()) written++;
        }
    }
    EXPECT_EQ(written, 9);
    EXPECT_NE(error.find(path + ": append failed"), std::string::npos) << error;
    EXPECT_NE(error.find("the line was not written"), std::string::npos) << error;
    EXPECT_EQ(fs::file_size(path), 9u * 101u) << "the partial 10th line was not cut back";
    const std::string text = trex::read_file(path);
    EXPECT_EQ(text.back(), '\n');
}

TEST(Files, StaleTempEntriesOfDeadWritersAreRemoved) {
    const std::string dir = trex::test::scratch_dir("files_stale");
    const long dead = dead_pid(), live = (long)getppid(), self = (long)getpid();
    const std::string stale[] = {
        dir + "/step-00000004.tmp-" + std::to_string(dead),   // a checkpoint (trex train)
        dir + "/.hf-out.tmp-" + std::to_string(dead) + "-3",  // a converted checkpoint (trex convert)
    };
    const std::string kept[] = {
        dir + "/step-00000008.tmp-" + std::to_string(live),  // a writer that still runs
        dir + "/source-0.tmp-" + std::to_string(self),       // this process's own
        dir + "/notes.tmp-abc",                               // not a pid
        dir + "/step-00000004",                               // a finished checkpoint
    };
    for (const auto& p : stale) fs::create_directories(p + "/sub");
    trex::write_file_atomic(stale[0] + "/sub/model.safetensors", std::string(4096, 'w'));
    for (const auto& p : kept) fs::create_directories(p);
    const auto removed = trex::remove_stale_temp_entries(dir, "test");
    EXPECT_EQ(removed.size(), 2u);
    for (const auto& p : stale) EXPECT_FALSE(fs::exists(p)) << p;
    for (const auto& p : kept) EXPECT_TRUE(fs::exists(p)) << p;
    EXPECT_TRUE(trex::remove_stale_temp_entries(dir + "/missing").empty());
}

TEST(Files, TreeSignatureChangesWithWrites) {
    const std::string dir = trex::test::scratch_dir("files_signature");
    EXPECT_EQ(trex::tree_signature(dir + "/missing"), 0u);
    const uint64_t empty = trex::tree_signature(dir);
    fs::create_directories(dir + "/step.tmp-1");
    const uint64_t made = trex::tree_signature(dir);
    EXPECT_NE(made, empty);
    trex::write_file_atomic(dir + "/step.tmp-1/a", "1234");
    const uint64_t written = trex::tree_signature(dir);
    EXPECT_NE(written, made);
    EXPECT_EQ(trex::tree_signature(dir), written) << "nothing changed, yet the signature did";
}

TEST(Files, StagedDirPublishesWholeOrNotAtAll) {
    const std::string dir = trex::test::scratch_dir("files_staged");
    const std::string target = dir + "/out";
    fs::create_directories(target);
    trex::write_file_atomic(target + "/old.txt", "old");
    std::string abandoned;
    {
        trex::staged_dir s(target + "/");  // a trailing separator names the same directory
        abandoned = s.path();
        EXPECT_NE(abandoned.find("/out.tmp-" + std::to_string(getpid()) + "-"), std::string::npos) << abandoned;
        trex::write_file_atomic(s.path() + "/new.txt", "new");
        // an error here: the object goes away unpublished
    }
    EXPECT_FALSE(fs::exists(abandoned));
    EXPECT_TRUE(fs::exists(target + "/old.txt")) << "the target changed before publish()";
    {
        trex::staged_dir s(target, /*hidden=*/true);
        EXPECT_EQ(fs::path(s.path()).filename().string().rfind(".out.tmp-", 0), 0u) << s.path();
        trex::write_file_atomic(s.path() + "/new.txt", "new");
        s.publish();
        EXPECT_THROW(s.publish(), trex::error);
    }
    EXPECT_EQ(trex::read_file(target + "/new.txt"), "new");
    EXPECT_FALSE(fs::exists(target + "/old.txt")) << "the old directory was merged, not replaced";
    for (const auto& e : fs::directory_iterator(dir))
        EXPECT_EQ(e.path().filename().string(), "out") << "left behind: " << e.path();
    // a target whose parent cannot be made: one line naming it
    const std::string m = trex::test::error_of([] { trex::staged_dir s("/proc/trex_no/out"); });
    EXPECT_NE(m.find("/proc/trex_no/out: cannot create the temporary directory"), std::string::npos) << m;
}
