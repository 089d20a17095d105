// `npm start` and `npm run start:memory|start:worker|start:gateway` build first, through this script.
// Started together (three terminals, a process manager), they build once: the first takes a lock and
// runs `npm run build`; the others wait for it and use what it built (two builds at once would collide:
// tsc writes the same outputs, and Vite refuses a second build of the console while one runs).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const stateDir = join(repoRoot, 'node_modules', '.cache', 'engram-build');
const lockDir = join(stateDir, 'lock');
const lastBuild = join(stateDir, 'last-build.json');
/** A lock directory with no owner recorded after this long is left over from a killed build. */
const OWNERLESS_STALE_MS = 10_000;
const POLL_MS = 250;

function say(line) {
  process.stdout.write(`engram | ${line}\n`);
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The pid holding the lock, or null when the lock is left over (its owner died, or never said who it was). */
function liveOwner() {
  try {
    const pid = Number(readFileSync(join(lockDir, 'owner'), 'utf8'));
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : null;
  } catch {
    try {
      return Date.now() - statSync(lockDir).mtimeMs < OWNERLESS_STALE_MS ? -1 : null;
    } catch {
      return -1; // released between the two reads: try again
    }
  }
}

/** Takes the lock (mkdir is atomic); returns whether another process held it meanwhile. */
function acquire() {
  mkdirSync(stateDir, { recursive: true });
  let waited = false;
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(join(lockDir, 'owner'), String(process.pid));
      return waited;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    const owner = liveOwner();
    if (owner === null) {
      rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (!waited) say(`another start is building Engram${owner > 0 ? ` (pid ${owner})` : ''}; waiting for it`);
    waited = true;
    sleep(POLL_MS);
  }
}

function readLastBuild() {
  try {
    return JSON.parse(readFileSync(lastBuild, 'utf8'));
  } catch {
    return null;
  }
}

const askedAt = Date.now();
const waited = acquire();
let status;
try {
  const previous = readLastBuild();
  if (waited && previous?.ok === true && previous.finishedAt >= askedAt) {
    // The build this start waited for has just finished: started together, they build the same tree.
    say('using the build another start has just made');
    status = 0;
  } else {
    const startedAt = Date.now();
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['run', 'build'], { cwd: repoRoot, stdio: 'inherit' });
    status = result.status ?? 1;
    writeFileSync(lastBuild, JSON.stringify({ startedAt, finishedAt: Date.now(), ok: status === 0 }));
  }
} finally {
  rmSync(lockDir, { recursive: true, force: true });
}
process.exit(status);
