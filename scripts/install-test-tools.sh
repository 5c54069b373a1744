#!/usr/bin/env bash
# The first step of `npm test`: the Debian packages the suites run for real, installed when missing.
#   - promtool (Debian's prometheus package), for scripts/check-alert-rules.sh (an error without it
#     when CI is set);
#   - pgbouncer, which test/pgbouncer.spec.ts starts on a port of its own;
#   - chromium (Debian's), which test/admin-page.chromium.spec.ts drives headless through
#     playwright-core (which downloads no browser of its own);
#   - nats-server, which the outbox relay suites start (with JetStream) on ports of their own.
# Installed only where that can be done without asking: as root with apt-get (CI, a container, this
# project's machines). Anywhere else it says what is missing and how to get it, and the suites that
# need it fail with the same advice.
#
# The packages' postinsts would also start a Prometheus server, a PgBouncer and a NATS server (invoke-rc.d, or
# deb-systemd-invoke under systemd) wherever init scripts may run; all obey policy-rc.d, so when the
# machine has none, one that denies every start (exit 101, the Docker image convention) stands in for
# the installs and is removed afterwards.
set -euo pipefail

missing_packages=()
command -v promtool >/dev/null || missing_packages+=(prometheus)
command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || missing_packages+=(pgbouncer)
[ -x /usr/bin/chromium ] || missing_packages+=(chromium)
command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || missing_packages+=(nats-server)
[ "${#missing_packages[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "install-test-tools: missing ${missing_packages[*]}; install them (Debian: apt-get install ${missing_packages[*]})," >&2
  echo "install-test-tools: or run the tests as root on Debian, where this step installs them" >&2
  exit 0
fi

echo "install-test-tools: installing ${missing_packages[*]} from Debian's packages"
added_policy_rc_d=
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\n# install-test-tools: no service starts while packages install\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  added_policy_rc_d=1
fi
trap '[ -z "$added_policy_rc_d" ] || rm -f /usr/sbin/policy-rc.d' EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing_packages[@]}" >/dev/null
