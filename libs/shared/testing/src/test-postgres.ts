import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The image compose runs; testcontainers uses the local copy (the engine script provides it) and never pulls. */
const POSTGRES_IMAGE = 'postgres:15-bookworm';
/** The server every machine of this project runs for tests (trust auth), when no Docker engine answers. */
const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432';

export interface TestDatabase {
  /** postgres://… of a database made for this test, empty. */
  readonly url: string;
  /** The rows of one statement, on a connection of its own. */
  query<T extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<T[]>;
  /** Drops the database (closing whatever is still connected to it). */
  drop(): Promise<void>;
}

export interface TestPostgres {
  /** A fresh, empty database on this server. */
  database(): Promise<TestDatabase>;
  /** Stops the server when this file started it (a container); the shared local server keeps running. */
  stop(): Promise<void>;
}

function dockerEngineAnswers(): boolean {
  if (!process.env['DOCKER_HOST']) return false;
  const result = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { timeout: 5_000, stdio: 'pipe' });
  return result.status === 0;
}

/**
 * PostgreSQL for one test file: testcontainers' `postgres:15-bookworm` where a Docker engine answers
 * (`DOCKER_HOST`; ENGRAM_TEST_DOCKER=off opts out), otherwise the local server at 127.0.0.1:5432; the
 * test log says which. Each `database()` is a new database, dropped by the test after.
 */
export async function startPostgres(): Promise<TestPostgres> {
  if (process.env['ENGRAM_TEST_DOCKER'] !== 'off' && dockerEngineAnswers()) return startPostgresContainer();
  console.info(`test postgres: local server ${LOCAL_SERVER}`);
  return { database: () => createDatabase(LOCAL_SERVER), stop: async () => undefined };
}

async function startPostgresContainer(): Promise<TestPostgres> {
  // Ryuk, testcontainers' reaper, is an image from a registry; stop() removes the container instead.
  process.env['TESTCONTAINERS_RYUK_DISABLED'] ??= 'true';
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
  const container = await new PostgreSqlContainer(POSTGRES_IMAGE).withUsername('postgres').withPassword('postgres').start();
  const server = `postgres://postgres:postgres@${container.getHost()}:${container.getPort()}`;
  console.info(`test postgres: testcontainers ${POSTGRES_IMAGE}, container ${container.getId().slice(0, 12)} on port ${container.getPort()}`);
  return { database: () => createDatabase(server), stop: async () => void (await container.stop({ remove: true })) };
}

async function createDatabase(server: string): Promise<TestDatabase> {
  const name = `engram_test_${randomBytes(6).toString('hex')}`;
  await query(`${server}/postgres`, `CREATE DATABASE ${name}`);
  const url = `${server}/${name}`;
  return {
    url,
    query: (text, values) => query(url, text, values),
    drop: async () => void (await query(`${server}/postgres`, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}
