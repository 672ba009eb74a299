#include "trex/base/progress.hpp"

#include <unistd.h>

#include <cmath>

#include <fmt/format.h>

#include "trex/base/timer.hpp"

namespace trex {

std::string format_duration(double s) {
    if (!std::isfinite(s) || s < 0) return "?";
    const int64_t t = (int64_t)std::llround(s);
    if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t % 3600) / 60);
    if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
    return fmt::format("{}s", t);
}

progress::progress(int64_t total, std::string unit, FILE* out, double line_interval_s)
    : total_(total), unit_(std::move(unit)), out_(out), tty_(isatty(fileno(out)) != 0), t0_(now_seconds()),
      interval_(line_interval_s) {}

void progress::draw(int64_t done, const std::string& note, bool final) {
    if (start_done_ < 0) start_done_ = done;
    const double el = now_seconds() - t0_;
    const double rate = el > 0 ? (double)(done - start_done_) / el : 0.0;
    const double eta = rate > 0 ? (double)(total_ - done) / rate : NAN;
    const double frac = total_ > 0 ? std::min(1.0, (double)done / (double)total_) : 1.0;
    if (tty_) {
        const int width = 30, filled = (int)std::lround(frac * width);
        std::string bar(filled, '#');
        bar.append(width - filled, '.');
        fmt::print(out_, "\r[{}] {}/{} {} | {:.2f} {}/s | ETA {} | {}\033[K", bar, done, total_, unit_, rate, unit_,
                   format_duration(eta), note);
        if (final) fmt::print(out_, "\n");
    } else {
        fmt::print(out_, "{}/{} {} ({:.0f}%) | {:.2f} {}/s | elapsed {} | ETA {} | {}\n", done, total_, unit_,
                   100.0 * frac, rate, unit_, format_duration(el), format_duration(eta), note);
    }
    std::fflush(out_);
}

void progress::update(int64_t done, const std::string& note) {
    const double t = now_seconds();
    if (tty_ || t - last_line_ >= interval_) {
        draw(done, note, false);
        last_line_ = t;
    }
}

void progress::finish(const std::string& note) { draw(total_, note, true); }

}  // namespace trex
