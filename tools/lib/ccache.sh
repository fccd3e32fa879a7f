# Sourced by tools/build, tools/test, tools/demo: every CMake tree of a run (the main one, the
# dogfood cross builds, the sanitizer tree, the trees tests make) compiles through ccache when it
# is installed. The environment reaches nested configures (CMake reads CMAKE_<LANG>_COMPILER_
# LAUNCHER from it on a tree's first configure). Paths are hashed relative to the checkout, so a
# second clone (CI's clean checkout) hits what an earlier one compiled.
if [ -z "${EMURUN_NO_CCACHE:-}" ] && command -v ccache >/dev/null 2>&1; then
    CCACHE_LAUNCHER=ccache
    export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
    export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
    export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
    # The CLI's precompiled header: cacheable only with these (ccache's manual).
    export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
