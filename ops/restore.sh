#!/usr/bin/env bash
# ops/restore.sh BACKUP: puts a backup made by ops/backup.sh (or `engram backup`) in place of the data.
# The current data moves to pre-restore-<time>/ inside the data dir; nothing is deleted.
# Compose: stops the stack, restores into the volume, starts it again. npm start: stop it first (Ctrl-C).
set -euo pipefail
backup="${1:?usage: ops/restore.sh BACKUP_DIR}"
backup="$(cd "$backup" && pwd)"
cd "$(dirname "$0")/.."
# Like npm start, take ENGRAM_DATA_DIR from .env unless the environment sets it.
if [ -z "${ENGRAM_DATA_DIR:-}" ] && [ -f .env ]; then
  ENGRAM_DATA_DIR="$(sed -n 's/^ENGRAM_DATA_DIR=//p' .env | tail -n 1)"
  [ -n "$ENGRAM_DATA_DIR" ] && export ENGRAM_DATA_DIR
fi
if docker compose ps -a --services 2>/dev/null | grep -qx memory; then
  name="$(basename "$backup")"
  docker compose stop gateway worker memory
  # The copy put into the volume goes once restored (or not): memory content left there would outlive a purge.
  # docker compose cp writes it as root, so root removes it (and the backups folder, when nothing else is in it).
  remove_copy() {
    docker compose run --rm --no-deps --user root memory sh -c 'rm -rf "$1"; rmdir /data/backups 2>/dev/null || true' remove "/data/backups/$name"
  }
  trap remove_copy EXIT
  docker compose cp "$backup" "memory:/data/backups/$name"
  docker compose run --rm --no-deps memory npx engram restore --from "/data/backups/$name"
  trap - EXIT
  remove_copy
  docker compose up -d
else
  npx engram restore --from "$backup"
fi
