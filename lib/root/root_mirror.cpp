// The Debian mirror a root is made from: the one this machine's apt uses, and whether it answers.
#include "process/spawn.hpp"
#include "root/root_internal.hpp"
#include "util/env.hpp"
#include "util/file.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <sys/socket.h>
#include <unistd.h>

namespace emurun {
namespace fs = std::filesystem;

namespace {

constexpr int k_connect_timeout_ms = 8000;
/// apt source lists are a few lines; anything bigger is not one.
constexpr std::size_t k_apt_list_max = 1 << 20;

/// The first "URIs:" of a deb822 .sources file that is not the security archive.
std::string deb822_uri(const fs::path& file) {
    std::istringstream in(util::read_file(file, k_apt_list_max).value_or(""));
    std::string line;
    while (std::getline(in, line)) {
        if (line.starts_with("URIs:") && line.find("security") == std::string::npos) {
            std::istringstream fields(line.substr(5));
            std::string uri;
            fields >> uri;
            return uri;
        }
    }
    return {};
}

/// The first URI of a "deb ..." line of a one-line-style list that is not the security archive.
std::string list_uri(const fs::path& file) {
    std::istringstream in(util::read_file(file, k_apt_list_max).value_or(""));
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string word;
        fields >> word;
        if (word != "deb" || line.find("security") != std::string::npos) {
            continue;
        }
        while (fields >> word) {
            if (word.find("://") != std::string::npos) {
                return word;
            }
        }
    }
    return {};
}

std::vector<fs::path> files_in(const fs::path& dir, const std::string& ext) {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
        if (e.path().extension() == ext) {
            out.push_back(e.path());
        }
    }
    std::ranges::sort(out);
    return out;
}

/// A socket address to connect to.
struct TcpAddress {
    sockaddr_storage addr{};
    socklen_t len = 0;
};

/// The TCP addresses of `host` (a name or a numeric address) as this machine resolves them:
/// `getent ahosts` (libc-bin), under the host's own name service (nsswitch.conf, resolved, ...).
/// Not getaddrinfo(): the emurun binary links glibc statically (issue 15, start-up), and a static
/// glibc would have to load the host's name service modules itself.
std::vector<TcpAddress> tcp_addresses(const std::string& host, std::uint16_t port) {
    auto run = detail::run_captured(Command{.argv = {"getent", "ahosts", "--", host}}, {});
    std::vector<TcpAddress> out;
    if (!run || run->start_error || !run->status.success()) {
        return out;
    }
    std::istringstream in(run->out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string text;
        std::string type;
        TcpAddress a;
        auto* v4 = reinterpret_cast<sockaddr_in*>(&a.addr);
        auto* v6 = reinterpret_cast<sockaddr_in6*>(&a.addr);
        if (!(fields >> text >> type) || type != "STREAM") {
            continue;
        }
        if (::inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(port);
            a.len = sizeof *v6;
        } else if (::inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
            v4->sin_family = AF_INET;
            v4->sin_port = htons(port);
            a.len = sizeof *v4;
        } else {
            continue;
        }
        out.push_back(a);
    }
    return out;
}

/// A TCP connection to `a` is accepted within k_connect_timeout_ms.
bool connects_to(const TcpAddress& a) {
    const util::UniqueFd sock(
        ::socket(a.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    const int fd = sock.get();
    if (fd < 0) {
        return false;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&a.addr), a.len) == 0) {
        return true;
    }
    if (errno != EINPROGRESS) {
        return false;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    return ::poll(&p, 1, k_connect_timeout_ms) == 1 &&
           ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
}

/// Connect to host:port (a decimal port) with a timeout; true on success.
bool connects(const std::string& host, const std::string& port) {
    unsigned number = 0;
    const char* end = port.data() + port.size();
    const auto parsed = std::from_chars(port.data(), end, number);
    if (parsed.ec != std::errc{} || parsed.ptr != end || number == 0 || number > 65535) {
        return false;
    }
    return std::ranges::any_of(tcp_addresses(host, static_cast<std::uint16_t>(number)),
                               connects_to);
}

} // namespace

std::string host_mirror(const fs::path& etc_apt) {
    for (const auto& f : files_in(etc_apt / "sources.list.d", ".sources")) {
        if (auto uri = deb822_uri(f); !uri.empty()) {
            return uri;
        }
    }
    std::vector<fs::path> lists{etc_apt / "sources.list"};
    for (auto& f : files_in(etc_apt / "sources.list.d", ".list")) {
        lists.push_back(std::move(f));
    }
    for (const auto& f : lists) {
        if (auto uri = list_uri(f); !uri.empty()) {
            return uri;
        }
    }
    return "http://deb.debian.org/debian";
}

namespace root_detail {

namespace {

Result<void> check_reachable(const std::string& url) {
    const auto scheme_end = url.find("://");
    const std::string scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
    const std::string rest = scheme_end == std::string::npos ? url : url.substr(scheme_end + 3);
    if (scheme == "file") {
        std::error_code ec;
        return fs::is_directory(rest, ec)
                   ? Result<void>{}
                   : fail(ErrorKind::not_found, "use the mirror " + url, "no such directory",
                          "name an existing directory or another mirror", "mirror");
    }
    std::string hostport = rest.substr(0, rest.find('/'));
    std::string port = scheme == "https" ? "443" : "80";
    if (const auto colon = hostport.rfind(':');
        colon != std::string::npos && hostport.find(']') == std::string::npos) {
        port = hostport.substr(colon + 1);
        hostport.resize(colon);
    }
    if (hostport.empty() || (scheme != "http" && scheme != "https")) {
        return fail(ErrorKind::bad_input, "use the mirror " + url,
                    "not an http(s):// or file:// URL", "e.g. http://deb.debian.org/debian",
                    "mirror");
    }
    if (!connects(hostport, port)) {
        return fail(ErrorKind::io, "reach the Debian mirror " + url,
                    "no mirror reachable: cannot connect to " + hostport + ":" + port,
                    "check the network or a proxy (http_proxy), or name a reachable mirror",
                    "mirror");
    }
    return {};
}

} // namespace

Result<void> check_mirror(const std::string& url) {
    // Through a proxy, apt talks to the proxy: that is what must answer.
    const auto proxy = util::get_env(url.starts_with("https:") ? "https_proxy" : "http_proxy");
    if (proxy && proxy->starts_with("http") && !url.starts_with("file:")) {
        return check_reachable(*proxy);
    }
    return check_reachable(url);
}

} // namespace root_detail
} // namespace emurun
