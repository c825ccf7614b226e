#!/usr/bin/env bash
# Stops what scripts/infra-up.sh started (Kafka and whichever SQL store runs). Safe to run
# again: servers that are not running are skipped. Installed files stay cached.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$here/../deploy/local"

"$deploy/kafka.sh" stop
"$deploy/mariadb.sh" stop
"$deploy/tidb.sh" stop
