#!/usr/bin/env bash
# Install the Debian packages the build, tests and lab need, if any is missing.
# Sourced by scripts/lab.sh and scripts/test.sh; needs root (or sudo) on Debian 12.
qlimits_install_deps() {
  local want=("$@") missing=()
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "qlimits: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
