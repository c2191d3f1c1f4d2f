#!/usr/bin/env bash
# Builds the workspace's documentation from scratch (`cargo doc --workspace --no-deps`)
# and fails on any rustdoc warning (an unresolved link is one), or if any page shows an intra-doc link as literal text (`[Config]`,
# `[llm_math::forward_time]`, ...) or links to another crate's page that does not exist.
# Rustdoc gives no warning for either: it renders a cross-crate link as plain text when
# the other crate's pages are not there yet.
#
# Why the directories are made first: rustdoc links to another crate only if that
# crate's folder already exists under target/doc, and with --no-deps cargo documents the
# workspace's crates in no particular order (cargo issue #8487), so on a fresh build a
# crate documented before its dependencies gets literal text. Creating every crate's
# folder first makes the links independent of the order; each folder is then filled by
# the same command. (Running `cargo doc --workspace --no-deps` a second time has the
# same effect, once the folders exist.)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
doc=target/doc

# The workspace's documented crates, from their manifests (`name = "..."`, `-` → `_`).
crates=()
for manifest in crates/*/Cargo.toml lectures/*/Cargo.toml; do
    [ -f "$manifest" ] || continue
    name=$(sed -n 's/^name *= *"\(.*\)"/\1/p' "$manifest" | head -n 1)
    crates+=("${name//-/_}")
done

rm -rf "$doc"
for c in "${crates[@]}"; do
    mkdir -p "$doc/$c"
done
# Unresolved links are rustdoc warnings: fail on them too. One job at a time: cargo empties a
# crate's folder just before documenting it, so with parallel jobs a crate documented at that
# moment sees its dependency's folder missing and writes literal text again (seen in CI).
RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --workspace --no-deps --quiet -j 1

# Literal link text, once the HTML tags are gone (rustdoc writes `[<code>Config</code>]`).
patterns=(-e '[Config]' -e '[Params]' -e '[KvCache::')
for c in "${crates[@]}"; do
    patterns+=(-e "[$c::")
done
status=0
pages=$(find "$doc" -name '*.html' -not -path "$doc/src/*" -not -path "$doc/static.files/*")
for page in $pages; do
    found=$(sed -e 's/<[^>]*>//g' "$page" | grep -oF "${patterns[@]}" | sort -u || true)
    if [ -n "$found" ]; then
        echo "unresolved intra-doc link in $page: $(echo "$found" | tr '\n' ' ')"
        status=1
    fi
done

# Links from one workspace crate's pages to another's must point at a page that exists.
alternatives=$(IFS='|'; echo "${crates[*]}")
for page in $pages; do
    dir=$(dirname "$page")
    for href in $(grep -oE 'href="(\.\./)+('"$alternatives"')/[^"#?]*' "$page" | sed 's/^href="//' | sort -u); do
        if [ ! -f "$dir/$href" ]; then
            echo "broken link in $page: $href"
            status=1
        fi
    done
done

if [ "$status" -eq 0 ]; then
    echo "doc links: $(echo "$pages" | wc -l) pages of ${#crates[@]} crates, no literal intra-doc links, no broken cross-crate links"
fi
exit "$status"
