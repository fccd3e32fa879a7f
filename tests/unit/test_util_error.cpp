// Error (include/emurun/error.hpp): kinds a caller switches on, the request field a hint
// concerns and how a tool spells it, and the kinds the library's main failures carry.
#include <emurun/arch.hpp>
#include <emurun/elf.hpp>
#include <emurun/error.hpp>
#include <emurun/qemu.hpp>

#include "testdir.hpp"

#include <doctest/doctest.h>

#include <cerrno>
#include <string>
#include <string_view>

using namespace emurun;

namespace {

std::string as_flag(std::string_view field) {
    return "--" + std::string(field);
}

std::string nothing(std::string_view /*field*/) {
    return {};
}

} // namespace

TEST_CASE("error: kind and field default to none; three-field errors are unchanged") {
    const Error e{"open x", "No such file or directory", "check the path"};
    CHECK(e.kind == ErrorKind::unspecified);
    CHECK(e.field.empty());
    CHECK(e.message() == "open x: No such file or directory (check the path)");
    CHECK(to_string(ErrorKind::unspecified) == "unspecified");
    CHECK(to_string(ErrorKind::missing_library) == "missing_library");
    CHECK(to_string(ErrorKind::kernel_unsupported) == "kernel_unsupported");
}

TEST_CASE("error: a field is spelled by the library as an option, by a tool as it likes") {
    const Error e = fail(ErrorKind::bad_input, "log directory d", "not UTF-8",
                         "choose a log directory whose path is UTF-8", "log_dir")
                        .error();
    CHECK(e.kind == ErrorKind::bad_input);
    CHECK(e.field == "log_dir");
    CHECK(e.hint == "choose a log directory whose path is UTF-8"); // no option in the text
    CHECK(
        e.message() ==
        "log directory d: not UTF-8 (choose a log directory whose path is UTF-8 (option log_dir))");
    CHECK(e.message(as_flag) ==
          "log directory d: not UTF-8 (choose a log directory whose path is UTF-8 (--log_dir))");
    CHECK(e.message(nothing) == "log directory d: not UTF-8 (choose a log directory whose path "
                                "is UTF-8)");
    const Error bare{"x", "y", "", ErrorKind::bad_input, "arch"};
    CHECK(bare.message() == "x: y (option arch)");
}

TEST_CASE("error: a message quoting a file's bytes reaches the terminal printable") {
    // A root's /var/lib/dpkg/arch is the image's: its escape sequences are shown, not run.
    const auto bad = emurun::find_arch("arm64\x1b]0;owned\x07\xe2\x80\xae");
    REQUIRE_FALSE(bad.has_value());
    const std::string m = bad.error().message();
    CHECK(m.find('\x1b') == std::string::npos);
    CHECK(m.find('\x07') == std::string::npos);
    CHECK(m.find("\xe2\x80\xae") == std::string::npos);
    CHECK_MESSAGE(m.find("arm64\\x1b]0;owned\\x07\\u202e") != std::string::npos, m);
    // Lines and tabs stay: a message may quote a program's last lines.
    const emurun::Error lines{"run x", "its last lines:\n\tone\r\n", ""};
    CHECK(lines.message() == "run x: its last lines:\n\tone\\x0d\n");
}

TEST_CASE("error: system errors are not_found, permission or io by errno") {
    CHECK(system_error("open a", ENOENT).kind == ErrorKind::not_found);
    CHECK(system_error("open a", ENOTDIR).kind == ErrorKind::not_found);
    CHECK(system_error("open a", EACCES).kind == ErrorKind::permission);
    CHECK(system_error("open a", EPERM).kind == ErrorKind::permission);
    CHECK(system_error("write a", ENOSPC).kind == ErrorKind::io);
    CHECK(system_error("open a", ENOENT).message() == "open a failed: No such file or directory");
}

TEST_CASE("error: the library's main failures carry their kind") {
    const auto missing = read_elf(test::testdir("kinds") / "no-such-file");
    REQUIRE_FALSE(missing.has_value());
    CHECK(missing.error().kind == ErrorKind::not_found);

    const auto script = read_elf(test::write_file("kinds/script.sh", "#!/bin/sh\necho hi\n"));
    REQUIRE_FALSE(script.has_value());
    CHECK(script.error().kind == ErrorKind::not_elf);

    const auto arch = find_arch("vax");
    REQUIRE_FALSE(arch.has_value());
    CHECK(arch.error().kind == ErrorKind::bad_input);

    const auto none =
        find_emulator(**find_arch("s390x"),
                      EmulatorSearch{.dirs = {test::testdir("kinds-empty")}, .system = false});
    REQUIRE_FALSE(none.has_value());
    CHECK(none.error().kind == ErrorKind::no_emulator);
}
