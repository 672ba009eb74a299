// Progress reporting for long jobs: on a terminal a bar with rate and ETA redrawn in place (at most 10 times a
// second); otherwise one line every `interval_s` seconds. Writes to stderr.
#pragma once

#include <string>

namespace trex {

class progress {
   public:
    progress(std::string label, long total, double interval_s = 10.0);
    // Reports `done` units finished; `note` is appended (e.g. "drops 12").
    void update(long done, const std::string& note = "");
    // Final line with the total time and rate.
    void finish(const std::string& note = "");

   private:
    void draw(long done, const std::string& note, bool final);
    std::string label_;
    long total_;
    double interval_s_, start_, last_ = -1e9;
    bool tty_;
};

}  // namespace trex
