// The server's listen queue (src/trex/serve/server.cpp): connections that arrive before the server accepts them are
// held by the kernel, many at once. With httplib's compiled-in queue of 5 only about six handshakes complete while
// nothing accepts; the rest wait for SYN retransmissions, and under load clients lost requests to read errors.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "support/test_support.hpp"
#include "trex/eval/backend.hpp"
#include "trex/model/config.hpp"
#include "trex/model/model.hpp"
#include "trex/serve/server.hpp"

namespace {

// A non-blocking connect to 127.0.0.1:port; -1 on failure.
int start_connect(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    return fd;
}

// How many of fds finished their handshake within `ms` (writable, no socket error).
int established(const std::vector<int>& fds, int ms) {
    std::vector<pollfd> p;
    for (int fd : fds) p.push_back({fd, POLLOUT, 0});
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    int done = 0;
    while (std::chrono::steady_clock::now() < until) {
        ::poll(p.data(), p.size(), 50);
        done = 0;
        for (const pollfd& q : p) {
            int err = 0;
            socklen_t len = sizeof(err);
            if ((q.revents & POLLOUT) && ::getsockopt(q.fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) done++;
        }
        if (done == (int)fds.size()) break;
    }
    return done;
}

}  // namespace

TEST(ServeListen, ManyConnectionsWaitInTheQueueBeforeTheServerAccepts) {
    const auto cfg = trex::load_config(trex::test::source_path("configs/v4-micro.json"));
    trex::dsv4_model m(cfg);
    m.params().init(3, 0.05);
    const auto codec = trex::eval::make_byte_codec(cfg.eos_token_id);
    trex::serve::server_options o;
    o.port = 0;
    o.model_name = "trex";
    trex::serve::server srv(m, *codec, o);
    srv.bind();  // listening, not accepting (server::run is not called)
    std::vector<int> fds;
    for (int i = 0; i < 48; i++) {
        const int fd = start_connect(srv.bound_port());
        ASSERT_GE(fd, 0);
        fds.push_back(fd);
    }
    EXPECT_EQ(established(fds, 2000), 48) << "handshakes completed while nothing accepts";
    for (int fd : fds) ::close(fd);
}
