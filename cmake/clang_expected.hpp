// Force-included in clang builds before 19 (cmake/EmurunSanitizers.cmake): libstdc++ 12 offers
// <expected> only when __cpp_concepts >= 202002L, which these clang versions do not advertise
// although they compile that header. Only in C++23 mode: older modes (a C++17 test tool) must
// keep the true value, or libstdc++ uses `requires` where they cannot parse it.
#if defined(__clang__) && __cplusplus > 202002L && __cpp_concepts < 202002L
#undef __cpp_concepts
#define __cpp_concepts 202002L
#endif
