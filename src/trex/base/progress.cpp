#include "trex/base/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "trex/base/timer.hpp"

namespace trex {

namespace {

std::string duration(double s) {
    if (s < 0 || s > 1e7) return "?";
    const long t = (long)(s + 0.5);
    if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (int)(t % 3600 / 60));
    if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, (int)(t % 60));
    return fmt::format("{}s", t);
}

}  // namespace

progress::progress(std::string label, long total, double interval_s)
    : label_(std::move(label)), total_(total), interval_s_(interval_s), start_(now_seconds()),
      tty_(isatty(STDERR_FILENO) != 0) {}

void progress::update(long done, const std::string& note) {
    const double now = now_seconds();
    if (now - last_ < (tty_ ? 0.1 : interval_s_)) return;
    last_ = now;
    draw(done, note, false);
}

void progress::finish(const std::string& note) { draw(total_, note, true); }

void progress::draw(long done, const std::string& note, bool final) {
    const double el = now_seconds() - start_;
    const double rate = el > 0 ? done / el : 0;
    const double eta = rate > 0 ? (total_ - done) / rate : -1;
    const double frac = total_ > 0 ? (double)done / total_ : 1.0;
    std::string line;
    if (tty_) {
        const int width = 30, fill = (int)(frac * width);
        std::string bar(fill, '=');
        if (fill < width) bar += '>' + std::string(width - fill - 1, ' ');
        line = fmt::format("\r{} [{}] {}/{} {:.1f}/s {} {}", label_, bar, done, total_, rate,
                           final ? "in " + duration(el) : "ETA " + duration(eta), note);
        std::fprintf(stderr, "%s\033[K%s", line.c_str(), final ? "\n" : "");
    } else {
        line = fmt::format("{}: {}/{} ({:.0f}%) {:.1f}/s elapsed {} {} {}\n", label_, done, total_, 100 * frac, rate,
                           duration(el), final ? "done" : "ETA " + duration(eta), note);
        std::fputs(line.c_str(), stderr);
    }
    std::fflush(stderr);
}

}  // namespace trex
