#!/bin/sh
# Installs a released evalctl binary: picks the asset for this OS and
# architecture, resolves "latest" to a release tag, downloads the archive and
# its SHA-256 checksum, refuses it unless they match, and unpacks the binary.
# The setup action (action.yml) runs it; anyone can run it by hand:
#
#   sh scripts/install.sh resolve   # prints version=, target=, dir= (and writes
#                                   # them to $GITHUB_OUTPUT when that is set)
#   sh scripts/install.sh install   # resolve, then download, verify, unpack
#
# Settings, from the environment (all optional):
#   EVALCTL_VERSION       a release tag (v0.2.0; 0.2.0 means the same) or
#                         "latest" (the default)
#   EVALCTL_REPOSITORY    owner/name of the repository that publishes the
#                         releases (default: EVALCTL_ACTION_REPOSITORY, the
#                         repository the action was loaded from, which the
#                         runner does not always say; else REPOSITORY below)
#   EVALCTL_GITHUB_TOKEN  a token for the GitHub API, used only to resolve
#                         "latest" (raises the rate limit; never printed)
#   EVALCTL_INSTALL_DIR   where the binary goes (default: the runner's tool
#                         cache, else ~/.cache, in evalctl/VERSION/TARGET)
#   EVALCTL_API_URL       the GitHub API (default https://api.github.com)
#   EVALCTL_DOWNLOAD_URL  where release assets are served (default
#                         https://github.com); assets are fetched from
#                         $EVALCTL_DOWNLOAD_URL/OWNER/NAME/releases/download/TAG/
#
# The last two are the seam the tests use: tests/it/install_action.rs serves
# fake release assets on 127.0.0.1 and points them there.
#
# Assets (made by .github/workflows/release.yml), per target:
#   evalctl-TARGET.tar.gz          evalctl-TARGET/evalctl (+ README.md)
#   evalctl-TARGET.tar.gz.sha256   "<sha256>  evalctl-TARGET.tar.gz"
#
# Exit status: 0 installed (or resolved); 1 anything else, with a message on
# stderr saying what and where.

set -eu

# The repository of the releases when nothing says otherwise. YOUR-ORG is a
# placeholder: replace it with the owner of the repository that publishes
# evalctl's releases.
REPOSITORY='YOUR-ORG/evalctl'

fail() {
  printf 'evalctl install: %s\n' "$*" >&2
  exit 1
}

# Sets target: the release target (Rust target triple) of this machine.
detect_target() {
  os=$(uname -s)
  arch=$(uname -m)
  case "$os" in
    Linux) os_part=unknown-linux-musl ;;
    Darwin) os_part=apple-darwin ;;
    *) os_part= ;;
  esac
  case "$arch" in
    x86_64 | amd64) arch_part=x86_64 ;;
    aarch64 | arm64) arch_part=aarch64 ;;
    *) arch_part= ;;
  esac
  if [ -z "$os_part" ] || [ -z "$arch_part" ]; then
    fail "no release binary for this platform ($os $arch): releases exist for Linux and macOS on x86_64 and aarch64. Build from source instead: cargo install --locked --git https://github.com/$repository --tag <version> evalctl"
  fi
  target="$arch_part-$os_part"
}

# Sets tag: $1 as written in a release URL, v1.2.3 (also from 1.2.3); refuses
# anything that is not a plain tag.
normalize_tag() {
  tag=$1
  case "$tag" in
    '' | *[!A-Za-z0-9._+-]* | .* | -*) fail "not a release tag: '$tag' (write v1.2.3, 1.2.3 or latest)" ;;
  esac
  case "$tag" in
    [0-9]*) tag="v$tag" ;;
  esac
}

# Sets status: GET $1 into file $2, the HTTP status (000 when nothing
# answered). With $3 = auth, also sends the token, in a header read from
# stdin so that it is on no command line.
fetch() {
  url=$1
  out=$2
  with_token=${3:-}
  set -- --silent --show-error --location --retry 3 --retry-delay 1 \
    --connect-timeout 20 --max-time 300 --output "$out" --write-out '%{http_code}' "$url"
  if [ "$with_token" = auth ] && [ -n "${EVALCTL_GITHUB_TOKEN:-}" ]; then
    status=$(printf 'Authorization: Bearer %s\n' "$EVALCTL_GITHUB_TOKEN" |
      curl --header @- --header 'Accept: application/vnd.github+json' "$@") || true
  else
    status=$(curl "$@") || true
  fi
  [ -n "$status" ] || status=000
}

# Sets version: the tag of the latest release, from the GitHub API.
latest_tag() {
  api=${EVALCTL_API_URL:-https://api.github.com}
  url="${api%/}/repos/$repository/releases/latest"
  fetch "$url" "$work/latest.json" auth
  case "$status" in
    200) ;;
    404) fail "no release of $repository found ($url: HTTP 404)" ;;
    401 | 403) fail "the GitHub API refused the request ($url: HTTP $status); check the github-token input (a rate limit also answers 403)" ;;
    *) fail "could not resolve the latest release ($url: HTTP $status)" ;;
  esac
  # The top-level "tag_name" member: one member per line after splitting at
  # commas; an escaped occurrence in the release notes starts with a backslash.
  found=$(tr ',' '\n' <"$work/latest.json" |
    sed -n 's/^[[:space:]{]*"tag_name"[[:space:]]*:[[:space:]]*"\([^"\\]*\)".*/\1/p' |
    head -n 1)
  [ -n "$found" ] || fail "the answer of $url has no tag_name"
  normalize_tag "$found"
  version=$tag
}

# Prints the SHA-256 of file $1, in lowercase hex.
sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  elif command -v openssl >/dev/null 2>&1; then
    openssl dgst -sha256 -r "$1" | cut -d ' ' -f 1
  else
    return 1
  fi
}

# Sets version, target and dir.
resolve() {
  detect_target
  requested=${EVALCTL_VERSION:-latest}
  if [ "$requested" = latest ]; then
    latest_tag
  else
    normalize_tag "$requested"
    version=$tag
  fi
  if [ -n "${EVALCTL_INSTALL_DIR:-}" ]; then
    dir=$EVALCTL_INSTALL_DIR
  else
    dir="${RUNNER_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}}/evalctl/${version#v}/$target"
  fi
}

install_binary() {
  asset="evalctl-$target.tar.gz"
  downloads=${EVALCTL_DOWNLOAD_URL:-https://github.com}
  base="${downloads%/}/$repository/releases/download/$version"

  fetch "$base/$asset" "$work/$asset"
  case "$status" in
    200) ;;
    404) fail "evalctl $version has no asset $asset ($base/$asset: HTTP 404): is $version a release of $repository, and does it ship $target?" ;;
    *) fail "could not download $base/$asset (HTTP $status)" ;;
  esac
  fetch "$base/$asset.sha256" "$work/$asset.sha256"
  [ "$status" = 200 ] ||
    fail "could not download the checksum $base/$asset.sha256 (HTTP $status); refusing to install an unverified binary"

  expected=$(head -n 1 "$work/$asset.sha256" | cut -d ' ' -f 1 | tr 'A-F' 'a-f')
  case "$expected" in
    *[!0-9a-f]*) expected= ;;
  esac
  [ "${#expected}" -eq 64 ] || fail "$asset.sha256 does not hold a SHA-256 checksum"
  actual=$(sha256_of "$work/$asset") ||
    fail "no sha256sum, shasum or openssl to verify the download with"
  [ "$actual" = "$expected" ] ||
    fail "checksum mismatch for $asset: expected $expected (from $asset.sha256), got $actual; nothing was installed"

  mkdir "$work/unpacked"
  tar -xzf "$work/$asset" -C "$work/unpacked" ||
    fail "$asset is not a gzip-compressed tar archive"
  binary="$work/unpacked/evalctl-$target/evalctl"
  [ -f "$binary" ] || fail "$asset has no evalctl-$target/evalctl"
  chmod 755 "$binary"
  # It must run here before it goes on PATH.
  reported=$("$binary" --version) || fail "the downloaded evalctl does not run on this machine"

  mkdir -p "$dir"
  mv -f "$binary" "$dir/evalctl.new"
  mv -f "$dir/evalctl.new" "$dir/evalctl"
  printf 'Installed %s (%s, %s) in %s\n' "$reported" "$version" "$target" "$dir"
}

outputs() {
  printf 'version=%s\ntarget=%s\ndir=%s\n' "$version" "$target" "$dir"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf 'version=%s\ntarget=%s\ndir=%s\n' "$version" "$target" "$dir" >>"$GITHUB_OUTPUT"
  fi
}

repository=${EVALCTL_REPOSITORY:-${EVALCTL_ACTION_REPOSITORY:-$REPOSITORY}}
case "$repository" in
  */*/* | */ | /* | *[!A-Za-z0-9._/-]*) fail "the repository must be owner/name, not '$repository'" ;;
  */*) ;;
  *) fail "the repository must be owner/name, not '$repository'" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/evalctl-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM

case "${1:-install}" in
  resolve)
    resolve
    outputs
    ;;
  install)
    resolve
    install_binary
    outputs
    ;;
  *) fail "usage: install.sh [resolve|install]" ;;
esac
