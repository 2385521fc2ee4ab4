#!/usr/bin/env bash
# Installs Debian's glance-api 25.1.0, its S3 driver and MariaDB (the database
# glance-api reaches in the e2e test, started by the test itself) without prompts and
# without starting the packaged service. Idempotent: a second run only
# checks. Needs root (CI and these machines run as root).
set -euo pipefail
pkgs=(glance-api glance-common python3-glance-store python3-boto3 mariadb-server)
installed=$(dpkg-query -W -f='${Status}\n' "${pkgs[@]}" 2>/dev/null | grep -c '^install ok installed$' || true)
if [ "$installed" -eq "${#pkgs[@]}" ]; then
  echo "glance-api $(dpkg-query -W -f='${Version}' glance-api) already installed"
  exit 0
fi
echo "installing ${pkgs[*]} from Debian"
debconf-set-selections <<'SEL'
glance-common glance/configure_db boolean false
glance-common glance/configure_rabbit boolean false
glance-common glance/configure_ksat boolean false
glance-api glance/configure_api-endpoint boolean false
SEL
# invoke-rc.d consults policy-rc.d: 101 means "do not start services".
policy=/usr/sbin/policy-rc.d
had_policy=false
[ -e "$policy" ] && had_policy=true && cp -p "$policy" "$policy.glance-krm"
printf '#!/bin/sh\nexit 101\n' > "$policy"
chmod +x "$policy"
restore() { if $had_policy; then mv "$policy.glance-krm" "$policy"; else rm -f "$policy"; fi; }
trap restore EXIT
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
echo "installed glance-api $(dpkg-query -W -f='${Version}' glance-api)"
