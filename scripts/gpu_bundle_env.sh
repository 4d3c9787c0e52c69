# Sourced by the GPU-host scripts: what every one of them does with a
# bundle (scripts/gpu-bundle.sh) before running it.

# Unpacks BUNDLE's xz-compressed binaries (once: parts may run as several
# invocations side by side) and makes them executable.
unpack_bundle() {
  (
    cd "$1" || exit 1
    for f in *.xz; do [ -e "$f" ] && { [ -e "${f%.xz}" ] || xz -dk "$f"; }; done
    chmod +x warpread* it-tests 2>/dev/null
    true
  )
}

# In a bundle folder: the environment the integration tests read there
# (real data beside it in BUNDLE-data, the corpus if bundled, the
# repository root ROOT for fixtures and scripts).
it_tests_env() {
  export WARPREAD_REALDATA="$PWD-data/realdata" WARPREAD_BIN="$PWD/warpread"
  export WARPREAD_ROOT="$1" WARPREAD_EXPECTED_CACHE="$PWD/.corpus-expected"
  [ -d corpus ] && export WARPREAD_CORPUS="$PWD/corpus"
  ln -sfn "$PWD-data/realdata" realdata
}
