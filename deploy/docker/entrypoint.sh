#!/bin/sh
# Entry point of every Trellis image. Starts the service named by $SERVICE (set when the
# image was built), or, with SERVICE=cli, the `trellis` command with the container's
# arguments (`migrate`, `topics ensure`, ...). `exec` makes node PID 1, so SIGTERM from the
# kubelet reaches the service's graceful shutdown directly.
#
# The application root is found from this script's place (<root>/deploy/docker), so the
# same command works in the image (/app) and in a checkout after `npm run build`.
set -eu

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"

case "${SERVICE:-}" in
  ingestion | chunking | extraction | graph-store | retrieval | chat | http-api)
    exec node --enable-source-maps "services/${SERVICE}/dist/main.js" "$@"
    ;;
  cli)
    exec node --enable-source-maps services/standalone/bin/trellis.js "$@"
    ;;
  *)
    echo "SERVICE must be one of ingestion, chunking, extraction, graph-store, retrieval, chat, http-api or cli (got '${SERVICE:-}')" >&2
    exit 64
    ;;
esac
