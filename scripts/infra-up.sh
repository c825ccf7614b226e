#!/usr/bin/env bash
# Installs (first time only, cached under ~/.cache/trellis) and starts the local infrastructure
# that tests and dev use: a Kafka broker and a MySQL-protocol SQL store. Safe to run again:
# servers that are already running are left as they are.
#
#   TRELLIS_SQL_STORE=mariadb (default) | tidb
#     mariadb: Debian's MariaDB 10.11 on 127.0.0.1:4000 (no VECTOR type).
#     tidb:    tidb-server built from source; the Go module proxy here does not serve the
#              pinned TiDB version, so this fails at install (see deploy/local/tidb.sh).
# Ports: KAFKA_PORT (9092), KAFKA_CONTROLLER_PORT (9093), TIDB_PORT / MARIADB_PORT (4000),
#        TIDB_STATUS_PORT (10080). Data: TRELLIS_INFRA_DIR (default: /tmp/trellis-*).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deploy="$here/../deploy/local"
store="${TRELLIS_SQL_STORE:-mariadb}"
started=$SECONDS

case "$store" in
  mariadb | tidb) ;;
  *) echo "[infra] ERROR: TRELLIS_SQL_STORE must be mariadb or tidb, not '$store'" >&2; exit 2 ;;
esac

echo "[infra] Kafka"
"$deploy/kafka.sh" start
echo "[infra] SQL store: $store"
"$deploy/$store.sh" start

echo "[infra] up in $((SECONDS - started))s:" \
  "kafka 127.0.0.1:${KAFKA_PORT:-9092}," \
  "$store 127.0.0.1:${MARIADB_PORT:-${TIDB_PORT:-4000}} (user root, no password)"
