// The Debian mirror a root is made from: the one this machine's apt uses, and whether it answers.
#include "root/root_internal.hpp"
#include "util/env.hpp"
#include "util/file.hpp"

#include <algorithm>
#include <cerrno>
#include <netdb.h>
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

/// Connect to host:port with a timeout; true on success.
bool connects(const std::string& host, const std::string& port) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0) {
        return false;
    }
    bool ok = false;
    for (addrinfo* a = res; a != nullptr && !ok; a = a->ai_next) {
        const util::UniqueFd sock(
            ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        const int fd = sock.get();
        if (fd < 0) {
            continue;
        }
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            ok = true;
        } else if (errno == EINPROGRESS) {
            pollfd p{fd, POLLOUT, 0};
            int err = 0;
            socklen_t len = sizeof err;
            ok = ::poll(&p, 1, k_connect_timeout_ms) == 1 &&
                 ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
        }
    }
    ::freeaddrinfo(res);
    return ok;
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
                   : fail("use the mirror " + url, "no such directory",
                          "name an existing directory or another mirror (option mirror)");
    }
    std::string hostport = rest.substr(0, rest.find('/'));
    std::string port = scheme == "https" ? "443" : "80";
    if (const auto colon = hostport.rfind(':');
        colon != std::string::npos && hostport.find(']') == std::string::npos) {
        port = hostport.substr(colon + 1);
        hostport.resize(colon);
    }
    if (hostport.empty() || (scheme != "http" && scheme != "https")) {
        return fail("use the mirror " + url, "not an http(s):// or file:// URL",
                    "e.g. http://deb.debian.org/debian (option mirror)");
    }
    if (!connects(hostport, port)) {
        return fail("reach the Debian mirror " + url,
                    "no mirror reachable: cannot connect to " + hostport + ":" + port,
                    "check the network or a proxy (http_proxy), or name a reachable mirror "
                    "(option mirror)");
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
