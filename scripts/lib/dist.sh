# shellcheck shell=bash
# The one home of stackbot's release-binary conventions, sourced by scripts/package-binary
# (which builds the assets) and scripts/install-stackbot (which downloads and verifies them),
# so the two can never disagree on a name:
#
#   https://github.com/<repo>/releases/download/v<version>/stackbot-v<version>-<target>.tar.gz
#   https://github.com/<repo>/releases/download/v<version>/SHA256SUMS
#
# The archive holds one folder, stackbot-v<version>-<target>/, with `stackbot`, `LICENSE` and
# `README.md`. `SHA256SUMS` is `sha256sum` output over every archive of the release. Version
# and repository come from the checkout's Cargo.toml, so an action pinned to a commit installs
# exactly the version that commit declares.

# The `[package]` value of KEY in the Cargo.toml at $1 (first occurrence, which is [package]).
dist_cargo_field() {
  local manifest="$1" key="$2"
  sed -n "s/^${key} *= *\"\\([^\"]*\\)\".*/\\1/p" "$manifest" | head -n1
}

# The version declared by the checkout at $1, e.g. 0.1.0.
dist_version() {
  dist_cargo_field "$1/Cargo.toml" version
}

# owner/name of the GitHub repository declared by the checkout at $1 (Cargo.toml `repository`).
dist_repository() {
  dist_cargo_field "$1/Cargo.toml" repository | sed -E 's#^https://github\.com/##; s#\.git$##; s#/+$##'
}

# The Rust target triple of a prebuilt binary for this machine, or nothing when none is built.
dist_host_target() {
  local os arch
  os="$(uname -s)"
  arch="$(uname -m)"
  [ "$os" = Linux ] || return 0
  case "$arch" in
    x86_64 | amd64) echo x86_64-unknown-linux-gnu ;;
    aarch64 | arm64) echo aarch64-unknown-linux-gnu ;;
  esac
}

# Every target a release ships, one per line.
dist_targets() {
  printf '%s\n' x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu
}

# stackbot-v<version>-<target>: the archive's stem and its single top-level folder.
dist_stem() {
  echo "stackbot-v$1-$2"
}

# The archive file name for version $1 and target $2.
dist_asset() {
  echo "$(dist_stem "$1" "$2").tar.gz"
}

# The workflow that builds and attests the binaries (the attestation's signer).
DIST_WORKFLOW=.github/workflows/binaries.yml
