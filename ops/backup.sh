#!/usr/bin/env bash
# ops/backup.sh [DEST]: a consistent backup of a running Engram into DEST/engram-<time> (default ./backups),
# safe while it serves. With the compose stack up, the backup is taken inside the memory container and
# copied out of the volume; otherwise `npx engram backup` reads ENGRAM_DATA_DIR (default ./data).
set -euo pipefail
mkdir -p "${1:-backups}"
dest="$(cd "${1:-backups}" && pwd)"
name="engram-$(date -u +%Y%m%dT%H%M%SZ)"
cd "$(dirname "$0")/.."
# Like npm start, take ENGRAM_DATA_DIR from .env unless the environment sets it.
if [ -z "${ENGRAM_DATA_DIR:-}" ] && [ -f .env ]; then
  ENGRAM_DATA_DIR="$(sed -n 's/^ENGRAM_DATA_DIR=//p' .env | tail -n 1)"
  [ -n "$ENGRAM_DATA_DIR" ] && export ENGRAM_DATA_DIR
fi
if docker compose ps --status running --services 2>/dev/null | grep -qx memory; then
  # The copy in the volume goes even when copying it out fails: memory content left there would outlive a purge.
  trap 'docker compose exec -T memory rm -rf "/data/backups/$name"' EXIT
  docker compose exec -T memory npx engram backup --to "/data/backups/$name"
  docker compose cp "memory:/data/backups/$name" "$dest/$name"
else
  npx engram backup --to "$dest/$name"
fi
echo "$dest/$name"
