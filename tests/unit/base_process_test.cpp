// run_process (src/trex/base/process.hpp): both output streams read while stdin is written, so a child that echoes a
// large input back never stalls against a full pipe; stdin is /dev/null without input; a child that leaves before
// reading its input, a missing program and a timeout are reported, never a hang or a SIGPIPE.
#include <gtest/gtest.h>

#include <string>

#include "trex/base/process.hpp"

using trex::process_output;
using trex::run_process;

TEST(BaseProcess, LargeInputIsEchoedWhileTheOutputIsRead) {
    std::string input;
    for (int i = 0; input.size() < (3u << 20); i++) input += "line " + std::to_string(i) + "\n";  // 3 MiB > pipes
    const process_output o = run_process({"cat"}, 60, input);
    EXPECT_EQ(o.exit_code, 0);
    EXPECT_FALSE(o.timed_out);
    EXPECT_EQ(o.out.size(), input.size());
    EXPECT_TRUE(o.out == input);
}

TEST(BaseProcess, WithoutInputStdinIsEmpty) {
    const process_output o = run_process({"wc", "-c"}, 30);
    EXPECT_EQ(o.exit_code, 0);
    EXPECT_EQ(o.out, "0\n");
}

TEST(BaseProcess, AChildThatReadsNothingMissingProgramsAndTimeouts) {
    const process_output early = run_process({"true"}, 30, std::string(1 << 20, 'x'));  // leaves unread
    EXPECT_EQ(early.exit_code, 0);
    EXPECT_FALSE(early.timed_out);
    const process_output missing = run_process({"trex-no-such-program"}, 30, "input");
    EXPECT_FALSE(missing.error.empty());
    const process_output slow = run_process({"sleep", "30"}, 0.5, "input");
    EXPECT_TRUE(slow.timed_out);
    EXPECT_EQ(slow.signal, 9);
}
