// Versioned option structs (util/versioned.hpp): each list of fields matches its struct, a
// caller built with an older, shorter version gets the later fields' defaults, and a size no
// version has is refused with an error naming struct_size, by the library's own entry points.
#include "binfmt/binfmt_versions.hpp"
#include "launch/launch_versions.hpp"
#include "process/process_versions.hpp"
#include "sandbox/sandbox_versions.hpp"
#include "shim/shim_versions.hpp"
#include "skip.hpp"
#include "sysroot/sysroot_versions.hpp"
#include "testdir.hpp"
#include "util/file.hpp"
#include "util/versioned.hpp"

#include <emurun/binfmt.hpp>
#include <emurun/launch.hpp>
#include <emurun/process.hpp>
#include <emurun/sandbox.hpp>
#include <emurun/shim.hpp>
#include <emurun/sysroot.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace emurun;

namespace {

// Converts to any member's type: counts an aggregate's members by how many it can be
// brace-initialised from.
struct AnyMember {
    template <class U> operator U() const; // NOLINT: implicit on purpose
};

template <class T, class... A> constexpr std::size_t member_count() {
    if constexpr (requires { T{std::declval<A>()..., AnyMember{}}; }) {
        return member_count<T, A..., AnyMember>();
    } else {
        return sizeof...(A);
    }
}

template <class T> std::vector<std::size_t> listed_offsets() {
    std::vector<std::size_t> out;
    std::apply(
        [&](const auto&... f) {
            (out.push_back(util::versioned_detail::offset_of(f.member)), ...);
        },
        util::Versions<T>::fields);
    return out;
}

// The list names every member after struct_size, in declaration order, and its sizes grow with
// each version up to the struct's own.
template <class T> void check_list() {
    INFO("struct " << util::Versions<T>::name);
    CHECK(util::versioned_detail::offset_of(&T::struct_size) == 0);
    CHECK(std::tuple_size_v<decltype(util::Versions<T>::fields)> + 1 == member_count<T>());
    const auto offsets = listed_offsets<T>();
    for (std::size_t i = 1; i < offsets.size(); ++i) {
        CHECK(offsets[i - 1] < offsets[i]);
    }
    const auto& sizes = util::version_sizes<T>();
    REQUIRE_FALSE(sizes.empty());
    CHECK(sizes.back() == sizeof(T));
    for (std::size_t i = 1; i < sizes.size(); ++i) {
        CHECK(sizes[i - 1] < sizes[i]);
    }
}

// The baseline's layout of T (abi/libemurun.abi) is a version the library reads: a field added at
// the end without the next version in its list fails here, before any program meets it.
template <class T> void check_baseline(const std::string& abi) {
    const std::string name(util::Versions<T>::name);
    INFO("struct " << name);
    const std::string key = "<class-decl name='" + name + "' size-in-bits='";
    const auto at = abi.find(key);
    REQUIRE(at != std::string::npos);
    const auto bytes = std::stoul(abi.substr(at + key.size())) / 8;
    const auto& sizes = util::version_sizes<T>();
    CHECK(std::find(sizes.begin(), sizes.end(), bytes) != sizes.end());
    // abidiff lets it grow at its end only when abi/versioned.suppr names it.
    const auto suppr = util::read_file(emurun::test::source_dir() / "abi/versioned.suppr");
    REQUIRE(suppr);
    const auto listed = [&](const char* before, const char* after) {
        return suppr->find(before + name + after) != std::string::npos;
    };
    CHECK((listed("(", "|") || listed("|", "|") || listed("|", ")")));
}

// A struct as it looks after a second version appended two fields.
struct Grown {
    std::uint32_t struct_size = sizeof(Grown);
    std::string name = "default";
    int count = 1;
    std::string added = "v2 default"; // version 2
    bool flag = false;                // version 2
};

} // namespace

template <> struct emurun::util::Versions<Grown> {
    static constexpr std::string_view name = "Grown";
    static constexpr auto fields =
        std::tuple{util::field(&Grown::name), util::field(&Grown::count),
                   util::field(&Grown::added, 2), util::field(&Grown::flag, 2)};
};

TEST_CASE("every versioned struct's list of fields matches the struct") {
    check_list<LaunchRequest>();
    check_list<ShimSpec>();
    check_list<SandboxSpec>();
    check_list<SpawnOptions>();
    check_list<BinfmtOptions>();
    check_list<SysrootRequest>();
    check_list<Grown>();
}

TEST_CASE("the ABI baseline's versioned structs are versions the library reads" *
          test::may_skip()) {
#if !defined(__x86_64__) || !defined(__GLIBCXX__)
    EMURUN_SKIP("abi/libemurun.abi holds x86-64 layouts with libstdc++; this build's differ");
#else
    const auto abi = util::read_file(emurun::test::source_dir() / "abi/libemurun.abi");
    REQUIRE(abi);
    check_baseline<LaunchRequest>(*abi);
    check_baseline<ShimSpec>(*abi);
    check_baseline<SandboxSpec>(*abi);
    check_baseline<SpawnOptions>(*abi);
    check_baseline<BinfmtOptions>(*abi);
    check_baseline<SysrootRequest>(*abi);
#endif
}

TEST_CASE("a caller of today's version is read in place") {
    const Grown given{.name = "x", .count = 7, .added = "y", .flag = true};
    std::optional<Grown> upgraded;
    auto form = util::caller_form(given, upgraded);
    REQUIRE(form);
    CHECK(*form == &given);
    CHECK_FALSE(upgraded);
}

TEST_CASE("a caller built with an older version gets the later fields' defaults") {
    // An old program's struct is a prefix of today's: the bytes after it are not its own, so
    // they are filled with values the library must not read.
    const auto& sizes = util::version_sizes<Grown>();
    REQUIRE(sizes.size() == 2);
    Grown given{.name = "old", .count = 3, .added = "not the caller's", .flag = true};
    given.struct_size = static_cast<std::uint32_t>(sizes[0]);
    std::optional<Grown> upgraded;
    auto form = util::caller_form(given, upgraded);
    REQUIRE(form);
    REQUIRE(upgraded);
    CHECK(*form == &*upgraded);
    CHECK(upgraded->struct_size == sizeof(Grown));
    CHECK(upgraded->name == "old");
    CHECK(upgraded->count == 3);
    CHECK(upgraded->added == "v2 default");
    CHECK_FALSE(upgraded->flag);
}

TEST_CASE("a size no version has is refused, naming struct_size") {
    Grown given;
    given.struct_size = sizeof(Grown) + 16;
    std::optional<Grown> upgraded;
    auto newer = util::caller_form(given, upgraded);
    REQUIRE_FALSE(newer);
    CHECK(newer.error().kind == ErrorKind::bad_input);
    CHECK(newer.error().field == "struct_size");
    CHECK(newer.error().hint.find("newer libemurun") != std::string::npos);
    given.struct_size = 5;
    auto garbage = util::caller_form(given, upgraded);
    REQUIRE_FALSE(garbage);
    CHECK(garbage.error().hint.find("leave struct_size") != std::string::npos);
}

TEST_CASE("the library's entry points check the caller's struct_size") {
    LaunchRequest launch{.program = "/bin/true"};
    launch.struct_size = launch.struct_size + 8;
    auto plan = plan_launch(launch);
    REQUIRE_FALSE(plan);
    CHECK(plan.error().field == "struct_size");
    CHECK(plan.error().what.find("emurun::LaunchRequest") != std::string::npos);

    SysrootRequest sysroot;
    sysroot.arch = "aarch64";
    sysroot.dir = "/tmp/x";
    sysroot.struct_size = 1;
    auto argv = sysroot_tool_argv(sysroot, "/bin/true");
    REQUIRE_FALSE(argv);
    CHECK(argv.error().field == "struct_size");

    SandboxSpec sandbox;
    sandbox.arches = {*find_arch("s390x")};
    sandbox.struct_size = 0;
    auto failure = exec_in_sandbox(sandbox, {"true"});
    CHECK(failure.error.field == "struct_size");
    CHECK(failure.exit_code == 125);

    BinfmtOptions binfmt;
    binfmt.mount = "/nonexistent";
    binfmt.struct_size = binfmt.struct_size + 8;
    BinfmtFlags credentials;
    credentials.credentials = true;
    binfmt.allow_credentials = true; // unreadable: no opt-in is taken from it
    CHECK(missing_binfmt_opt_in(credentials, binfmt) == BinfmtOptIn::credentials);
    auto mounted = ensure_binfmt_mount(binfmt);
    REQUIRE_FALSE(mounted);
    CHECK(mounted.error().field == "struct_size");
}

TEST_CASE("every other entry point taking a versioned struct checks its struct_size") {
    const auto refused = [](const auto& result) {
        REQUIRE_FALSE(result);
        CHECK(result.error().kind == ErrorKind::bad_input);
        CHECK(result.error().field == "struct_size");
    };
    ShimSpec shim{.name = "tool", .target = "/bin/true"};
    shim.struct_size = 0;
    refused(add_shim("/nonexistent", shim, "/bin/true"));

    SandboxSpec sandbox{.arches = {*find_arch("s390x")}};
    sandbox.struct_size = sandbox.struct_size + 8;
    refused(plan_sandbox(sandbox));
    refused(plan_host_handlers(sandbox));
    refused(find_emurun_exe(sandbox));
    refused(sandbox_argv(sandbox, {"true"}));
    CHECK(exec_through_host_handlers(sandbox, {"true"}).error.field == "struct_size");

    BinfmtOptions binfmt{.mount = "/nonexistent", .dry_run = true};
    binfmt.struct_size = 3;
    refused(register_binfmt({}, binfmt));
    refused(unregister_binfmt({}, binfmt));
    auto enabled = set_binfmt_enabled({}, true, binfmt);
    REQUIRE_FALSE(enabled);
    CHECK(enabled.error().field == "struct_size");

    SpawnOptions spawn;
    spawn.struct_size = 1;
    Supervisor supervisor;
    refused(supervisor.spawn(Command{.argv = {"/bin/true"}}, spawn));
}

TEST_CASE("a copy of a versioned struct says its own layout's size, not its source's") {
    // A struct the library hands a program built against an older libemurun (a CommandRunner's
    // spawn options) says the library's larger size; the program's copy of it has the
    // program's layout, so it must say that one, or the library reads past the copy.
    SpawnOptions from_newer{.stdout_log = "out.log"};
    from_newer.struct_size = sizeof(SpawnOptions) + 48;
    const SpawnOptions copied = from_newer; // NOLINT: the copy is what is tested
    CHECK(copied.struct_size == sizeof(SpawnOptions));
    CHECK(copied.stdout_log == from_newer.stdout_log);
    SpawnOptions assigned;
    assigned = from_newer;
    CHECK(assigned.struct_size == sizeof(SpawnOptions));
    const SpawnOptions moved = std::move(from_newer);
    CHECK(moved.struct_size == sizeof(SpawnOptions));
    CHECK(moved.stdout_log == std::filesystem::path("out.log"));

    LaunchRequest request{.program = "/bin/true"};
    request.struct_size = 0;
    const std::vector<LaunchRequest> copies{request};
    CHECK(copies[0].struct_size == sizeof(LaunchRequest));
    CHECK(plan_launch(copies[0]));
    // Set by hand, a size stays as set (it is what the library checks).
    request.struct_size = 7;
    CHECK(request.struct_size == 7U);
}
