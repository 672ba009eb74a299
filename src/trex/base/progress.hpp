// Progress of long work: a bar with rate and ETA on a terminal, periodic plain lines otherwise (logs, CI).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace trex {

class progress {
   public:
    // total: units of work; unit: name of a unit ("steps"); out: stream (stderr by default)
    progress(int64_t total, std::string unit, FILE* out = stderr, double line_interval_s = 10.0);
    // done: units completed so far; note: short status text (e.g. "loss 3.21")
    void update(int64_t done, const std::string& note);
    void finish(const std::string& note);

   private:
    void draw(int64_t done, const std::string& note, bool final);
    int64_t total_;
    std::string unit_;
    FILE* out_;
    bool tty_;
    double t0_, last_line_ = -1e30, interval_;
    int64_t start_done_ = -1;
};

std::string format_duration(double seconds);  // "1h02m", "3m05s", "12s"

}  // namespace trex
