#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seeds: whole files from testdata/ (and
# from ../shared/corpora/ when it exists) for the file targets, encoded
# streams from make_seeds for the decoder targets. fuzz/corpus/ is
# git-ignored; nothing here is copied into the repository.
set -euo pipefail
cd "$(dirname "$0")"
root=..
corpus=corpus
mkdir -p "$corpus"/{orc_file,parquet_file,gsst_container}

copy() { # copy SRC_DIR PATTERN TARGET
    local src=$1 pat=$2 target=$3
    [ -d "$src" ] || return 0
    find "$src" -type f -name "$pat" -size -1024k -print0 |
        while IFS= read -r -d '' f; do
            cp -f "$f" "$corpus/$target/$(echo "$f" | sha1sum | cut -c1-16)-$(basename "$f")"
        done
}

copy "$root/testdata/orc" '*.orc' orc_file
copy "$root/testdata/parquet" '*.parquet' parquet_file
copy "$root/testdata" '*.gsst' gsst_container
# No GSST container ships in testdata: the reference Arrow IPC files give
# the container target the Arrow file structure it starts from.
copy "$root/testdata" '*.arrow' gsst_container
# Containers with GSST, Huffman and GSST-then-Huffman columns, written
# from small fixtures by a warpread binary of this checkout when one is
# built (`cargo build`).
bin=""
for b in "$root/target/debug/warpread" "$root/target/release/warpread"; do
    [ -x "$b" ] && bin=$b
done
if [ -n "$bin" ]; then
    for f in "$root"/testdata/parquet/*.parquet "$root"/testdata/orc/*.orc; do
        [ "$(stat -c %s "$f")" -lt 262144 ] || continue
        for codec in gsst huffman auto; do
            out="$corpus/gsst_container/$codec-$(basename "$f").arrow"
            "$bin" --backend cpu convert --codec "$codec" --batch-size 512 "$f" "$out" \
                > /dev/null 2>&1 || rm -f "$out"
            [ -f "$out" ] && [ "$(stat -c %s "$out")" -ge 1048576 ] && rm -f "$out"
        done
    done
fi
shared="$root/../shared/corpora"
if [ -d "$shared" ]; then
    copy "$shared" '*.orc' orc_file
    copy "$shared" '*.parquet' parquet_file
    copy "$shared" '*.gsst' gsst_container
fi

# Decoder seeds (a plain, non-instrumented build of the helper binary).
nice -n 10 cargo run --quiet --release --manifest-path seeds/Cargo.toml -- "$corpus"
for d in "$corpus"/*/; do
    printf '%-32s %5d files\n' "$(basename "$d")" "$(ls "$d" | wc -l)"
done
