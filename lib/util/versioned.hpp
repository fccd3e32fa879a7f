// Versioned option structs: the core's request structs that grow (LaunchRequest, ShimSpec,
// SandboxSpec, SpawnOptions, BinfmtOptions, SysrootRequest) begin with
// `StructSize<T> struct_size` (error.hpp: sizeof(T) as the code that made or copied the object
// was compiled, a copy taking its own T's size), and only ever
// gain fields at their end. A program built against an older libemurun passes the older, shorter
// layout, a prefix of today's; caller_form() reads it field by field and gives the later fields
// their defaults. Each struct's fields, with the version that added each, are listed once in a
// Versions<T> specialisation in its module; unit.versioned checks every list against its struct
// (every member listed, in order, sizes strictly growing). CONTRIBUTING.md, "The library's ABI",
// says how to add a field.
#pragma once

#include <emurun/error.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace emurun::util {

/// One field of a versioned struct: the member and the version (1, 2, ...) that added it.
template <class T, class M> struct VersionedField {
    M T::*member;
    std::uint32_t since;
};

/// `VersionedField{&T::m, since}` with the types deduced.
template <class T, class M>
constexpr VersionedField<T, M> field(M T::*member, std::uint32_t since = 1) {
    return {member, since};
}

/// Specialised per versioned struct T: `static constexpr std::string_view name` and
/// `static constexpr auto fields` (a tuple of field(), in declaration order, struct_size left out).
template <class T> struct Versions;

namespace versioned_detail {

template <class T, class M> std::size_t offset_of(M T::*member) {
    static const T probe{};
    return static_cast<std::size_t>(reinterpret_cast<const char*>(&(probe.*member)) -
                                    reinterpret_cast<const char*>(&probe));
}

/// The sizeof a caller built with version `v` has: its fields' end, rounded to their alignment.
template <class T> std::size_t size_at(std::uint32_t v) {
    std::size_t end = sizeof(T::struct_size);
    std::size_t align = alignof(decltype(T::struct_size));
    std::apply(
        [&](const auto&... f) {
            auto one = [&](const auto& fld) {
                using M = std::remove_reference_t<decltype(std::declval<T&>().*(fld.member))>;
                if (fld.since <= v) {
                    end = std::max(end, offset_of(fld.member) + sizeof(M));
                    align = std::max(align, alignof(M));
                }
            };
            (one(f), ...);
        },
        Versions<T>::fields);
    return (end + align - 1) / align * align;
}

template <class T> std::uint32_t newest_version() {
    std::uint32_t v = 1;
    std::apply([&](const auto&... f) { ((v = std::max(v, f.since)), ...); }, Versions<T>::fields);
    return v;
}

} // namespace versioned_detail

/// The sizeof of T at each version, from 1 to the newest (its last is sizeof(T) when the list
/// is right).
template <class T> const std::vector<std::size_t>& version_sizes() {
    static const std::vector<std::size_t> sizes = [] {
        std::vector<std::size_t> out;
        for (std::uint32_t v = 1; v <= versioned_detail::newest_version<T>(); ++v) {
            out.push_back(versioned_detail::size_at<T>(v));
        }
        return out;
    }();
    return sizes;
}

/// `given` as this library's T: itself when the caller was built with today's layout; else
/// its fields copied into `upgraded` (the ones its version lacks keep their defaults). Error
/// (bad_input, field struct_size) for a size no version has: a program built against a newer
/// libemurun, or a struct_size overwritten.
template <class T> Result<const T*> caller_form(const T& given, std::optional<T>& upgraded) {
    const std::uint32_t given_size = given.struct_size;
    if (given_size == sizeof(T)) {
        return &given;
    }
    const auto& sizes = version_sizes<T>();
    auto at = std::find(sizes.begin(), sizes.end(), given_size);
    if (at == sizes.end()) {
        return fail(ErrorKind::bad_input,
                    std::string("emurun::") + std::string(Versions<T>::name) +
                        " with struct_size " + std::to_string(given_size),
                    "this libemurun knows it as " +
                        (sizes.size() == 1
                             ? std::to_string(sizeof(T))
                             : std::to_string(sizes.front()) + " to " + std::to_string(sizeof(T))) +
                        " bytes",
                    given_size > sizeof(T)
                        ? "the program was built against a newer libemurun: install that one"
                        : "leave struct_size as it is: positional braces fill it first, so name "
                          "the fields instead (designated initializers)",
                    "struct_size");
    }
    const auto version = static_cast<std::uint32_t>(at - sizes.begin()) + 1;
    upgraded.emplace();
    std::apply(
        [&](const auto&... f) {
            ((f.since <= version ? void((*upgraded).*(f.member) = given.*(f.member)) : void()),
             ...);
        },
        Versions<T>::fields);
    return &*upgraded;
}

} // namespace emurun::util
