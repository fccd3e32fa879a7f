# shellcheck shell=sh
# Sourced by tools/dogfood and tests/bench/qemu-versions.sh: the dogfood pipeline
# (tests/dogfood/pipeline.json) with its @...@ paths filled in, on stdout.
#   dogfood_pipeline SOURCE_DIR BUILD_DIR DOGFOOD_DIR EMURUN >FILE
dogfood_pipeline() {
    sed -e "s|@SOURCE_DIR@|$1|g" -e "s|@BUILD_DIR@|$2|g" -e "s|@DOGFOOD_DIR@|$3|g" \
        -e "s|@EMURUN@|$4|g" "$1/tests/dogfood/pipeline.json"
}
