#!/usr/bin/env bash
# Where a Docker engine answers: build the image, bring docker-compose.yml up (project engram-smoke,
# own volumes, gateway on a free port), run the store-then-recall conversation, take it all down; then
# the README's More than one machine (project engram-cluster-smoke): a home server moved to PostgreSQL with
# engram log copy, docker-compose.postgres.yml on top (two memory replicas, one of them stopped
# mid-conversation), the table restored from pg_dump into an empty database.
# Without Docker, tests/e2e/compose-topology.e2e.spec.ts runs the same conversation against the
# compose file's services started as local processes.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! docker info >/dev/null 2>&1; then
  echo "compose-smoke: no Docker engine answers here; nothing to do (the compose topology e2e test covers the topology)" >&2
  exit 2
fi
npx tsx tests/support/compose-smoke.ts
exec npx tsx tests/support/compose-postgres-smoke.ts
