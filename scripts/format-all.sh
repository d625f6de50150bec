#!/usr/bin/env bash
# The one mechanical formatting commit: run once on a clean tree and commit its result alone, so `git blame
# --ignore-rev` can skip it. Needs `npm ci` (Biome) and ruff (requirements-dev.txt) on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "$(git status --porcelain)" ]]; then
  echo "format-all: commit or stash your changes first, so the formatting commit holds nothing else" >&2
  exit 1
fi
node_modules/.bin/biome format --write .
ruff check --select I --fix .
ruff format .
echo "format-all: done; review with git diff --stat, then: git commit -am 'Format every file with Biome and ruff'"
