#!/usr/bin/env bash
# The Debian packages the tests need, installed when this user can (root, or sudo without a password); otherwise the
# exact command to run, and a non-zero exit so that `make test` stops before running tests that would fail.
#   wordnet-base wordnet-sense-index   WordNet 3.0 for the synonym editor and tools/build_guard_lexicon.py
#   chromium                           the report's and the rating app's browser tests
# Already satisfied by other means: COUNTERFAIR_WORDNET=<dir with WordNet 3.0's data.* files>, chromium on PATH.
set -euo pipefail
missing=()
wordnet="${COUNTERFAIR_WORDNET:-/usr/share/wordnet}"
if [ ! -f "$wordnet/data.noun" ] || [ ! -f "$wordnet/index.sense" ]; then
  missing+=(wordnet-base wordnet-sense-index)
fi
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  missing+=(chromium)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

install_line="apt-get install -y ${missing[*]}"
if command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    run=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    run=(sudo -n)
  else
    echo "make test needs these Debian packages: ${missing[*]}" >&2
    echo "install them with:  sudo apt-get update && sudo $install_line" >&2
    exit 1
  fi
  echo "installing Debian packages for the tests: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! "${run[@]}" apt-get install -y -q "${missing[@]}" >/dev/null; then
    "${run[@]}" apt-get update -q >/dev/null && "${run[@]}" apt-get install -y -q "${missing[@]}" >/dev/null
  fi
  exit 0
fi
echo "make test needs WordNet 3.0 and Chromium (Debian: $install_line)." >&2
echo "Elsewhere: put WordNet 3.0's dict files in a directory and set COUNTERFAIR_WORDNET to it, and put chromium on PATH." >&2
exit 1
