#!/bin/bash
# Action step 1: decide how emurun gets installed, and the cache keys; no change to the machine.
#   the input 'deb'                 -> apt installs those .deb files
#   the input 'tarball' (path, URL) -> that release tarball
#   the action's ref is a release   -> its release tarball (RELEASE_URL/REF/emurun-VERSION-linux-ARCH.tar.gz,
#   tag (v1.2.3, 1.2.3)                RELEASE_URL = EMURUN_RELEASE_URL or the repository's GitHub
#                                      releases), when it is there
#   otherwise                       -> a source build (tools/install-deps --build picks the
#                                      packages of the release it runs on)
# The ref and repository come from EMURUN_ACTION_REF / EMURUN_ACTION_REPOSITORY, else from the
# action's own path, where the runner puts it (.../_actions/OWNER/REPO/REF).
# Outputs: method, url, version, distro, build-dir, build-key, cache-dir, cache-key.
. "$(dirname "$0")/common.sh"

arch=$(uname -m)
distro=$(. /etc/os-release && echo "${ID:-linux}-${VERSION_ID:-${VERSION_CODENAME:-unknown}}")
path=${GITHUB_ACTION_PATH:-$root}
ref=${EMURUN_ACTION_REF:-$(basename "$path")}
repo=${EMURUN_ACTION_REPOSITORY:-$(basename "$(dirname "$(dirname "$path")")")/$(basename "$(dirname "$path")")}
method=source url="" version=""
if [ -n "${EMURUN_DEB:-}" ]; then
    method=deb
elif [ -n "${EMURUN_TARBALL:-}" ]; then
    method=tarball url=$EMURUN_TARBALL
elif [[ $ref =~ ^v?([0-9]+\.[0-9]+\.[0-9]+)$ ]]; then
    version=${BASH_REMATCH[1]}
    url=${EMURUN_RELEASE_URL:-https://github.com/$repo/releases/download}/$ref/emurun-$version-linux-$arch.tar.gz
    if url_exists "$url"; then
        method=tarball
    else
        echo "emurun: no release tarball at $url: building emurun $ref from source"
        url=""
    fi
else
    echo "emurun: $ref is no release tag (v1.2.3): building emurun from source"
fi
# A source build's tree is cached under a key of the action's own files and the release.
srchash=$(cd "$root" && find . -type f ! -path './.git/*' ! -path './build*' -print0 | sort -z |
    xargs -0 sha256sum | sha256sum | cut -c1-16)
cache_dir=${EMURUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/emurun}
echo "emurun: install by $method${url:+ from $url} on $distro $arch"
github_file GITHUB_OUTPUT "method=$method"
github_file GITHUB_OUTPUT "url=$url"
github_file GITHUB_OUTPUT "version=$version"
github_file GITHUB_OUTPUT "distro=$distro"
github_file GITHUB_OUTPUT "build-dir=${EMURUN_BUILD_DIR:-$HOME/.cache/emurun-action/build}"
github_file GITHUB_OUTPUT "build-key=emurun-build-v1-$distro-$arch-$srchash"
github_file GITHUB_OUTPUT "cache-dir=$cache_dir"
github_file GITHUB_OUTPUT "cache-key=emurun-cache-v1-$distro-$arch"
