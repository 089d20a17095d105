import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3-multiple-ciphers';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { openMemoryService } from '@engram/memory-store';
import { startPostgres } from '@engram/testing';

// The launcher users run: the memory service's commands, and `mcp`, which it hands to the gateway's CLI.
const cli = fileURLToPath(new URL('../bin/engram.js', import.meta.url));
let dataDir: string;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'engram-cli-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function engram(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return engramWith({}, ...args);
}

function engramWith(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

const open = () => openMemoryService({ dataDir, tier1MaxChars: 400, logger: pino({ level: 'silent' }) });

async function seed(): Promise<{ user: string; fact: string }> {
  const service = await open();
  const user = await service.store({ pool: 'team', actor: 'user', content: 'prefers short answers\nwith examples', category: 'preference' });
  const fact = await service.store({ pool: 'team', actor: 'user', content: 'deploys with docker compose', category: 'project' });
  const gone = await service.store({ pool: 'team', actor: 'user', content: 'to archive', category: null });
  await service.archive({ pool: 'team', actor: 'user', id: gone.id });
  await service.close();
  return { user: user.id, fact: fact.id };
}

describe('npx engram', () => {
  it('log copy moves a home server log into PostgreSQL and back, and replay and verify work on a replica of the table', async () => {
    const server = await startPostgres();
    const database = await server.database();
    try {
      await seed();
      const into = await engram('log', 'copy', '--to', database.url, '--data-dir', dataDir);
      expect(into).toMatchObject({ code: 0, stdout: expect.stringMatching(/^copied 4 events .*verified event by event/) });
      const replica = join(dataDir, 'replica');
      const onTable = { ENGRAM_EVENT_STORE: database.url };
      expect(await engramWith(onTable, 'replay', '--data-dir', replica)).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^replayed 4 events/),
      });
      const verified = await engramWith(onTable, 'verify', '--data-dir', replica);
      expect(verified.stdout).toContain('ok: event store table checksums valid, 4 rows');
      expect(verified.code).toBe(0);
      const back = join(dataDir, 'back');
      expect(await engramWith(onTable, 'log', 'copy', '--to', 'file', join(back, 'events'))).toMatchObject({ code: 0 });
      expect(await engram('replay', '--data-dir', back)).toMatchObject({ code: 0 });
      expect(await engram('verify', '--data-dir', back)).toMatchObject({ code: 0 });
      expect((await engram('log', 'copy', '--to', 'mysql://db/x')).code).toBe(1);
    } finally {
      await database.drop();
      await server.stop();
    }
  });

  it('prints help and rejects unknown commands', async () => {
    const help = await engram('--help');
    expect(help.code).toBe(0);
    for (const command of ['replay', 'verify', 'compact', 'import-flat', 'export', 'stats', 'mcp']) expect(help.stdout).toContain(command);
    expect((await engram('nonsense')).code).toBe(2);
  });

  it("hands mcp to the gateway's bridge: its own help, and a usage error without --url", async () => {
    const help = await engram('mcp', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--url <url>');
    const missing = await engram('mcp');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--url/);
  });

  it('replay rebuilds a missing database from the log, and verify then passes', async () => {
    await seed();
    for (const file of readdirSync(dataDir).filter((name) => name.startsWith('engram.db'))) rmSync(join(dataDir, file));
    const replay = await engram('replay', '--data-dir', dataDir);
    expect(replay).toMatchObject({ code: 0 });
    expect(replay.stdout).toMatch(/replayed 4 events applied, 3 memories rebuilt/);
    const verify = await engram('verify', '--data-dir', dataDir);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toMatch(/^ok: .*seq 4, 3 memories/);
  });

  it('compact sums the references of the log, and verify then passes', async () => {
    const { fact } = await seed();
    const service = await open();
    for (let i = 0; i < 5; i += 1) await service.refresh({ pool: 'team', actor: 'llm', ids: [fact] });
    await service.close();
    const compact = await engram('compact', '--data-dir', dataDir);
    expect(compact).toMatchObject({ code: 0 });
    expect(compact.stdout).toMatch(/^compacted the event log: 4 reference events summed into 1, \d+ -> \d+ bytes/);
    expect((await engram('verify', '--data-dir', dataDir)).code).toBe(0);
  });

  it('verify exits 1 when the database differs from replay(log), and replay repairs it', async () => {
    const { fact } = await seed();
    const db = new Database(join(dataDir, 'engram.db'));
    db.prepare('UPDATE memories SET content = ? WHERE id = ?').run('tampered', fact);
    db.close();
    const verify = await engram('verify', '--data-dir', dataDir);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toContain(`memory ${fact} differs in content`);
    expect((await engram('replay', '--data-dir', dataDir)).code).toBe(0);
    expect((await engram('verify', '--data-dir', dataDir)).code).toBe(0);
  });

  it('verify exits 1 when a log checksum fails', async () => {
    await seed();
    const segment = join(dataDir, 'events', readdirSync(join(dataDir, 'events'))[0] ?? '');
    writeFileSync(segment, readFileSync(segment, 'utf8').replace('deploys with', 'deploys without'));
    const verify = await engram('verify', '--data-dir', dataDir);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(/0000000000000001\.ndjson, line 2: checksum mismatch/);
  });

  it('verify and replay name a complete last line that fails its checksum, and neither cuts it', async () => {
    const { fact } = await seed();
    const service = await open();
    await service.purge({ pool: 'team', actor: 'user', id: fact });
    await service.close();
    const segment = join(dataDir, 'events', readdirSync(join(dataDir, 'events'))[0] ?? '');
    // The purge is the last line; damage it as a disk would, keeping its newline.
    const damaged = readFileSync(segment, 'utf8').replace(/"t":"purged"(?=[^\n]*\n$)/, '"t":"purgeD"');
    writeFileSync(segment, damaged);
    const lastLine = damaged.trimEnd().split('\n').length;
    const verify = await engram('verify', '--data-dir', dataDir);
    expect(verify.code).toBe(1);
    expect(verify.stdout).toMatch(new RegExp(`0000000000000001\\.ndjson, line ${lastLine}: checksum mismatch`));
    const replay = await engram('replay', '--data-dir', dataDir);
    expect(replay.code).toBe(1);
    expect(replay.stderr + replay.stdout).toMatch(new RegExp(`line ${lastLine}: checksum mismatch`));
    expect(readFileSync(segment, 'utf8')).toBe(damaged);
  });

  it('refuses to replay while the memory service holds the data dir', async () => {
    await seed();
    const service = await open();
    try {
      const replay = await engram('replay', '--data-dir', dataDir);
      expect(replay.code).toBe(1);
      expect(replay.stderr).toMatch(/in use by another engram process/);
    } finally {
      await service.close();
    }
  });

  it('import-flat restores a pool from its flat files when log and database are lost', async () => {
    const { user, fact } = await seed();
    rmSync(join(dataDir, 'events'), { recursive: true });
    for (const file of readdirSync(dataDir).filter((name) => name.startsWith('engram.db'))) rmSync(join(dataDir, file));
    const result = await engram('import-flat', '--pool', 'team', '--data-dir', dataDir);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain('imported pool team: 2 stored, 0 updated, 0 unchanged');
    const service = await open();
    try {
      expect(await service.get({ pool: 'team', id: user })).toMatchObject({
        type: 'USER',
        category: 'preference',
        content: 'prefers short answers\nwith examples',
      });
      expect(await service.get({ pool: 'team', id: fact })).toMatchObject({
        type: 'MEMORY',
        category: 'project',
        content: 'deploys with docker compose',
      });
      expect(service.activeCount('team')).toBe(2);
    } finally {
      await service.close();
    }
    expect((await engram('import-flat', '--pool', 'team', '--data-dir', dataDir)).stdout).toContain('0 stored, 0 updated, 2 unchanged');
  });

  it('exports a pool as json or md and prints stats, while the service runs', async () => {
    const { user } = await seed();
    const service = await open();
    try {
      const json = await engram('export', '--pool', 'team', '--format', 'json', '--data-dir', dataDir);
      expect(json.code).toBe(0);
      expect((JSON.parse(json.stdout) as { id: string }[]).map((entry) => entry.id)).toContain(user);
      const md = await engram('export', '--pool', 'team', '--format', 'md', '--data-dir', dataDir);
      expect(md.stdout).toContain(`[id:${user}] (preference) prefers short answers`);
      expect(md.stdout).not.toContain('to archive');
      const stats = await engram('stats', '--json', '--data-dir', dataDir);
      expect(JSON.parse(stats.stdout)).toEqual({
        lastSeq: 4,
        pools: [{ pool: 'team', active: 2, archived: 1, byCategory: { preference: 1, project: 1 }, lastSeq: 4, lastChangedAt: expect.any(String) }],
      });
      expect((await engram('export', '--pool', '../x', '--data-dir', dataDir)).code).toBe(1);
    } finally {
      await service.close();
    }
  });
});
