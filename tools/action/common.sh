# Shared by the GitHub Action's steps (action.yml): sourced, not run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# Run as root: directly when we are root, else through sudo (GitHub's runners have it).
as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Append lines to a GitHub file command ($GITHUB_OUTPUT, $GITHUB_PATH, ...) when it is set.
github_file() { # VAR TEXT
    local file=${!1:-}
    [ -n "$file" ] && printf '%s\n' "$2" >>"$file"
    return 0
}

summary() { github_file GITHUB_STEP_SUMMARY "$1"; }

# url_exists URL: a local path, a file:// URL or one curl can fetch (HEAD, redirects followed).
url_exists() {
    case $1 in
        /*) [ -f "$1" ] ;;
        file://*) [ -f "${1#file://}" ] ;;
        *) curl -fsSLI --retry 2 -o /dev/null "$1" ;;
    esac
}

# fetch URL FILE: URL (a local path too) saved as FILE.
fetch() {
    case $1 in
        /*) cp "$1" "$2" ;;
        *) curl -fsSL --retry 3 -o "$2" "$1" ;;
    esac
}
