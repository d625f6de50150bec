#!/usr/bin/env bash
# Installs the Debian packages the test suites need, and only those that are missing.
#
# Idempotent and offline when everything is present: one dpkg-query call, no apt-get at all,
# so CI and developers can run it before every test run at no cost.
#
#   chromium          /usr/bin/chromium, driven by playwright-core (browser + code-server tests)
#   fonts-liberation  metric-compatible web fonts so screenshots show real text layout
#   postgresql        server binaries under /usr/lib/postgresql/*/bin (scripts/pg-cluster.mjs)
#   libkrb5-dev       gssapi/gssapi.h, needed to compile code-server's `kerberos` module
#   make g++ python3 pkg-config
#                     node-gyp toolchain: code-server's argon2 and node-pty build from source here
#   python3-venv      `python3 -m venv` for svc's torch venv (Debian's python3 needs it; pyenv's has it)
#
# Then svc's torch venv (what `svc setup torch` makes): engine/backends/torch/requirements.txt
# installed by pip into $SVC_TORCH_VENV (default ~/.cache/svc/torch-venv), and the linters of
# requirements-dev.txt into $SVC_DEV_VENV (default ~/.cache/svc/dev-venv), each skipped while its
# stamp matches its requirements' sha256.
set -euo pipefail

REQUIRED_PACKAGES=(chromium fonts-liberation postgresql libkrb5-dev make g++ python3 pkg-config python3-venv)
ROOT="$(cd "$(dirname "$0")/.." && pwd)"

log() { echo "setup-system: $*"; }
fail() { echo "setup-system: ERROR: $*" >&2; exit 1; }

# dpkg-query prints "ii " for an installed package; unknown packages print nothing and go to stderr.
missing_packages() {
  local status
  status="$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${REQUIRED_PACKAGES[@]}" 2>/dev/null || true)"
  local pkg
  for pkg in "${REQUIRED_PACKAGES[@]}"; do
    if ! grep -qE "^${pkg//+/\\+} ii" <<<"$status"; then
      echo "$pkg"
    fi
  done
}

# install_venv LABEL DIR REQUIREMENTS: a venv with those requirements, skipped while its stamp matches their sha256.
install_venv() {
  local label="$1" venv="$2" requirements="$3"
  local digest
  digest="$(sha256sum "$requirements" | cut -d' ' -f1)"
  if [[ -x "$venv/bin/python" && -f "$venv/svc-requirements.sha256" && "$(cat "$venv/svc-requirements.sha256")" == "$digest" ]]; then
    log "$label venv present ($venv)"
    return
  fi
  log "creating the $label venv $venv ($requirements)"
  [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" || fail "python3 -m venv $venv failed"
  local pip_log
  pip_log="$(mktemp -t setup-system-pip.XXXXXX.log)"
  # One try per index: an index this machine cannot reach (CI reaches only its configured one)
  # would otherwise cost minutes of retries per package.
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar off --retries "${PIP_RETRIES:-0}" -r "$requirements" >"$pip_log" 2>&1; then
    tail -n 30 "$pip_log" >&2
    fail "pip install -r $requirements failed (full log: $pip_log)"
  fi
  echo "$digest" >"$venv/svc-requirements.sha256"
  rm -f "$pip_log"
}

install_venvs() {
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/svc"
  local torch_venv="${SVC_TORCH_VENV:-$cache/torch-venv}"
  install_venv torch "$torch_venv" "$ROOT/engine/backends/torch/requirements.txt"
  log "torch venv ready: $("$torch_venv/bin/python" -c 'import torch, transformers, peft; print("torch", torch.__version__, "transformers", transformers.__version__, "peft", peft.__version__)')"
  # The test line's linters (ruff; scripts/lint.mjs finds it there).
  install_venv dev-tools "${SVC_DEV_VENV:-$cache/dev-venv}" "$ROOT/requirements-dev.txt"
}

mapfile -t MISSING < <(missing_packages)
if [[ ${#MISSING[@]} -eq 0 ]]; then
  log "all ${#REQUIRED_PACKAGES[@]} system packages present"
  install_venvs
  exit 0
fi

[[ $(id -u) -eq 0 ]] || fail "missing packages (${MISSING[*]}) and not root; run as root or install them by hand"

export DEBIAN_FRONTEND=noninteractive
# Other sessions on the same machine may hold the apt/dpkg locks: wait for them instead of failing.
APT_OPTS=(-q -y -o DPkg::Lock::Timeout=600 -o APT::Lock::Timeout=600)
APT_LOG="$(mktemp -t setup-system-apt.XXXXXX.log)"

log "apt-get update (missing: ${MISSING[*]})"
if ! apt-get "${APT_OPTS[@]}" update >"$APT_LOG" 2>&1; then
  tail -n 30 "$APT_LOG" >&2
  fail "apt-get update failed (full log: $APT_LOG)"
fi

for pkg in "${MISSING[@]}"; do
  log "installing $pkg"
done
# --no-install-recommends: chromium recommends a desktop stack (upower, printing, notification
# daemon) that headless tests never use; the fonts it recommends are listed explicitly above.
if ! apt-get "${APT_OPTS[@]}" install --no-install-recommends "${MISSING[@]}" >>"$APT_LOG" 2>&1; then
  tail -n 30 "$APT_LOG" >&2
  fail "apt-get install ${MISSING[*]} failed (full log: $APT_LOG)"
fi

STILL_MISSING="$(missing_packages)"
[[ -z "$STILL_MISSING" ]] || fail "still missing after install: $STILL_MISSING (log: $APT_LOG)"
rm -f "$APT_LOG"
log "installed ${#MISSING[@]} package(s)"
install_venvs
