// OutputSink (the CLI's, emurun_term.hpp): what a run prints never blocks on a stalled or vanished
// reader.
#include <emurun_term.hpp>

#include "util/fd.hpp"

#include <doctest/doctest.h>

#include <csignal>
#include <poll.h>
#include <string>
#include <unistd.h>

namespace {

using emurun::OutputSink;

/// Everything waiting in the pipe behind `fd` (read end), without blocking.
std::string drain_pipe(int fd) {
    std::string out;
    char buf[4096];
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) {
            return out;
        }
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) {
            return out;
        }
        out.append(buf, static_cast<std::size_t>(n));
    }
}

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
        ++n;
    }
    return n;
}

} // namespace

TEST_CASE("runner output: a reader that stalls loses step output, with one notice, not the run") {
    auto out = emurun::util::make_pipe();
    auto notes = emurun::util::make_pipe();
    REQUIRE(out.has_value());
    REQUIRE(notes.has_value());
    std::string notices;
    {
        OutputSink err(notes->second.get(), "stderr");
        OutputSink sink(out->second.get(), "stdout", &err);
        const std::string chunk(64 * 1024, 'x');
        // The pipe takes 64 KiB, the queue 1 MiB: the rest is dropped instead of blocking.
        for (std::size_t i = 0; i < OutputSink::k_queue_limit / chunk.size() + 4; ++i) {
            sink.write_step_output(chunk);
        }
        notices = drain_pipe(notes->first.get());
    }
    CHECK(count(notices, "emurun: warning: stdout is not being read: step output is no longer "
                         "printed there (the logs have all of it)\n") == 1);
    const std::string printed = drain_pipe(out->first.get());
    CHECK_FALSE(printed.empty());
    CHECK(printed.size() < 2 * OutputSink::k_queue_limit);
}

TEST_CASE("runner output: a reader that went away is a notice on the other stream") {
    auto out = emurun::util::make_pipe();
    auto notes = emurun::util::make_pipe();
    REQUIRE(out.has_value());
    REQUIRE(notes.has_value());
    auto* old = std::signal(SIGPIPE, SIG_IGN); // as `emurun run` does
    {
        OutputSink err(notes->second.get(), "stderr");
        OutputSink sink(out->second.get(), "stdout", &err);
        out->first.reset(); // the reader is gone
        sink.write("emurun: step a passed\n");
        sink.write_step_output("more\n"); // no second notice, no SIGPIPE
    }
    std::signal(SIGPIPE, old);
    CHECK(count(drain_pipe(notes->first.get()),
                "emurun: warning: stdout was closed by its reader") == 1);
}
