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
