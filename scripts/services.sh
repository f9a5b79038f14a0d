# Sourced by scripts/test, .ci/run and bench/run: makes sure the local
# PostgreSQL (127.0.0.1:5432, user postgres) and Redis (127.0.0.1:6379) are up,
# starting them if they are down, and fails loudly if they cannot be.

keel_fail() { echo "error: $*" >&2; exit 1; }

keel_ensure_postgres() {
  if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then return 0; fi
  echo "PostgreSQL is down; starting it" >&2
  command -v pg_ctlcluster >/dev/null || keel_fail "PostgreSQL is not installed (pg_ctlcluster missing)"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start \
    || keel_fail "could not start PostgreSQL"
  for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p 5432 && return 0
    sleep 1
  done
  keel_fail "PostgreSQL did not come up on 127.0.0.1:5432"
}

keel_ensure_redis() {
  if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then return 0; fi
  echo "Redis is down; starting it" >&2
  command -v redis-server >/dev/null || keel_fail "Redis is not installed (redis-server missing)"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || keel_fail "could not start Redis"
  for _ in $(seq 1 30); do
    redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && return 0
    sleep 1
  done
  keel_fail "Redis did not come up on 127.0.0.1:6379"
}

keel_ensure_nextest() {
  command -v cargo-nextest >/dev/null && return 0
  echo "cargo-nextest is missing; installing it" >&2
  cargo install --locked cargo-nextest || keel_fail "could not install cargo-nextest"
}

# The browser tests drive Debian's Chromium through chromedriver.
keel_ensure_chromium() {
  command -v chromium >/dev/null && command -v chromedriver >/dev/null && return 0
  echo "chromium or chromedriver is missing; installing them (apt-get)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver) >/dev/null \
    || keel_fail "could not install chromium and chromium-driver"
}

# The fault suite's rolling restart runs behind Debian's haproxy.
keel_ensure_haproxy() {
  command -v haproxy >/dev/null && return 0
  echo "haproxy is missing; installing it (apt-get)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy) >/dev/null \
    || keel_fail "could not install haproxy"
}

# promtool, from Debian's prometheus package (pinned), for the alert rules
# tests: unpacked into the build directory, never installed (the package
# would start a Prometheus server).
KEEL_PROMETHEUS_DEB="2.42.0+ds-5+deb12u1"
keel_ensure_promtool() {
  local dest="${CARGO_TARGET_DIR:-target}/tools/promtool"
  [ -x "$dest/usr/bin/promtool" ] && [ "$(cat "$dest/.keel-version" 2>/dev/null)" = "$KEEL_PROMETHEUS_DEB" ] && return 0
  echo "promtool is missing; unpacking it from Debian's prometheus $KEEL_PROMETHEUS_DEB" >&2
  local tmp
  tmp=$(mktemp -d)
  chmod 755 "$tmp" # apt downloads as its own user
  (apt-get update -qq && cd "$tmp" && apt-get download -qq "prometheus=$KEEL_PROMETHEUS_DEB") >/dev/null \
    || keel_fail "could not download Debian's prometheus $KEEL_PROMETHEUS_DEB"
  rm -rf "$dest" && mkdir -p "$dest"
  dpkg-deb -x "$tmp"/prometheus_*.deb "$dest" || keel_fail "could not unpack prometheus"
  echo "$KEEL_PROMETHEUS_DEB" > "$dest/.keel-version"
  rm -rf "$tmp"
}

# The npm packages the tests drive (the real @trpc/client, ...), from their
# lock files; installed again only when a lock file changed.
keel_ensure_test_packages() {
  command -v npm >/dev/null || keel_fail "npm is not installed (Node 18+ is needed for the client-library tests)"
  local dir dest
  for dir in crates/channel/tests/trpc-client crates/keel/tests/openapi crates/keel/tests/provider-sdks; do
    # Installed in the build directory, out of the source tree (testkit's
    # node::package copies the scripts beside them and runs them there).
    dest="${CARGO_TARGET_DIR:-target}/tools/npm/$dir"
    rm -rf "$dir/node_modules" # where earlier versions installed them
    if [ ! -f "$dest/node_modules/.package-lock.json" ] || ! cmp -s "$dir/package-lock.json" "$dest/node_modules/.keel-lock"; then
      echo "installing the npm packages of $dir into $dest" >&2
      mkdir -p "$dest"
      cp "$dir/package.json" "$dir/package-lock.json" "$dest/"
      (cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null && cp package-lock.json node_modules/.keel-lock) \
        || keel_fail "npm ci failed for $dir"
    fi
  done
}

# The Python tools the tests drive, each set from its hashed lock file, in
# a virtual environment of its own in the build directory (out of the
# source tree; testkit finds them beside the test binaries); installed
# again only when the lock file changed: schemathesis, and the checkers
# no one here wrote (kubernetes-validate for the deployment files, dkimpy
# for the mail's signatures).
keel_ensure_python_packages() {
  command -v python3 >/dev/null || keel_fail "python3 is not installed (3.10+ is needed for the API fuzzing tests)"
  keel_python_set crates/testkit/schemathesis schemathesis st
  keel_python_set crates/testkit/checkers checkers kubernetes-validate
  keel_python_set crates/testkit/replication replication litestream
}

# keel_python_set DIR NAME PROBE: DIR/requirements.txt into tools/NAME.
keel_python_set() {
  local dir=$1 venv="${CARGO_TARGET_DIR:-target}/tools/$2" probe=$3
  if [ ! -x "$venv/bin/$probe" ] || ! cmp -s "$dir/requirements.txt" "$venv/.keel-lock"; then
    echo "installing the Python packages of $dir into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    (python3 -m venv "$venv" \
      && "$venv/bin/pip" install --quiet --require-hashes --no-deps -r "$dir/requirements.txt" \
      && cp "$dir/requirements.txt" "$venv/.keel-lock") \
      || keel_fail "could not install the Python packages of $dir"
  fi
}
