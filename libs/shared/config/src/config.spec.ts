import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig, redactedUrl } from './config.js';
import { EncryptionKey } from './encryption-key.js';

describe('loadConfig: embeddings', () => {
  it('is off without an endpoint or a model folder', () => {
    expect(loadConfig({}).embeddings).toBeNull();
  });

  it('reads an endpoint', () => {
    expect(loadConfig({ EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1/', EMBEDDINGS_MODEL: 'nomic-embed-text' }).embeddings).toEqual({
      kind: 'endpoint',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      model: 'nomic-embed-text',
      queryTimeoutMs: 800,
      minSimilarity: 0.3,
    });
  });

  it('reads a model folder, with the threads a run may use', () => {
    expect(loadConfig({ EMBEDDINGS_MODEL_DIR: '/models/all-MiniLM-L6-v2' }).embeddings).toEqual({
      kind: 'model-dir',
      dir: '/models/all-MiniLM-L6-v2',
      threads: undefined,
      queryTimeoutMs: 800,
      minSimilarity: 0.3,
    });
    expect(loadConfig({ EMBEDDINGS_MODEL_DIR: '/m', EMBEDDINGS_THREADS: '1' }).embeddings).toMatchObject({ threads: 1 });
    expect(() => loadConfig({ EMBEDDINGS_MODEL_DIR: '/m', EMBEDDINGS_THREADS: '0' })).toThrow(/EMBEDDINGS_THREADS/);
  });

  it('refuses both at once: which one embeds would be a guess', () => {
    expect(() => loadConfig({ EMBEDDINGS_BASE_URL: 'http://127.0.0.1:11434/v1', EMBEDDINGS_MODEL_DIR: '/m' })).toThrow(
      new ConfigError('invalid configuration: EMBEDDINGS_BASE_URL and EMBEDDINGS_MODEL_DIR are both set; set one (an endpoint, or a model folder)'),
    );
  });
});

describe('loadConfig: the at-rest key', () => {
  const hex = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';
  const base64 = Buffer.from(hex, 'hex').toString('base64');

  it('is off when unset', () => {
    expect(loadConfig({}).encryptionKey).toBeNull();
  });

  it('reads 64 hex digits or base64 of 32 bytes, and both name the same key', () => {
    const fromHex = loadConfig({ ENGRAM_ENCRYPTION_KEY: hex }).encryptionKey;
    const fromBase64 = loadConfig({ ENGRAM_ENCRYPTION_KEY: `${base64}\n` }).encryptionKey;
    expect(fromHex?.sqlcipherKey).toBe(`x'${hex}'`);
    expect(fromBase64?.id).toBe(fromHex?.id);
    expect(loadConfig({ ENGRAM_ENCRYPTION_KEY: EncryptionKey.generate() }).encryptionKey?.id).not.toBe(fromHex?.id);
  });

  it('reads the key from a file (a compose secret)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-key-'));
    try {
      writeFileSync(join(dir, 'key'), `${hex}\n`);
      expect(loadConfig({ ENGRAM_ENCRYPTION_KEY_FILE: join(dir, 'key') }).encryptionKey?.sqlcipherKey).toBe(`x'${hex}'`);
      expect(() => loadConfig({ ENGRAM_ENCRYPTION_KEY_FILE: join(dir, 'missing') })).toThrow(
        new ConfigError(`invalid configuration: ENGRAM_ENCRYPTION_KEY_FILE: cannot read ${join(dir, 'missing')} (ENOENT)`),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a key of the wrong length or alphabet with a clear line that does not echo it', () => {
    for (const bad of [hex.slice(2), `${hex}00`, 'correct horse battery staple', Buffer.alloc(31).toString('base64'), `${hex.slice(1)}g`]) {
      let message = '';
      try {
        loadConfig({ ENGRAM_ENCRYPTION_KEY: bad });
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(
        'invalid configuration: ENGRAM_ENCRYPTION_KEY: must be 32 bytes written as 64 hex digits or base64 (44 characters); `npx engram keygen` prints a fresh one',
      );
    }
  });

  it('refuses both the variable and the file', () => {
    expect(() => loadConfig({ ENGRAM_ENCRYPTION_KEY: hex, ENGRAM_ENCRYPTION_KEY_FILE: '/run/secrets/engram_key' })).toThrow(/both set/);
  });

  it('never shows the key in JSON, a string or inspect', () => {
    const key = EncryptionKey.parse(hex);
    expect(JSON.stringify({ key })).not.toContain(hex.slice(0, 16));
    expect(`${String(key)} ${inspect(key)}`).not.toContain(hex.slice(0, 16));
  });
});

describe('loadConfig: the memory replicas the gateway and worker call', () => {
  const token = { ENGRAM_INTERNAL_TOKEN: 'a-token-of-16-characters' };

  it('is the one at MEMORY_HOST/MEMORY_PORT without MEMORY_HOSTS', () => {
    expect(loadConfig({}).memory.replicas).toEqual([{ host: '127.0.0.1', port: 4001 }]);
    expect(loadConfig({ MEMORY_HOST: 'memory', MEMORY_PORT: '5001' }).memory.replicas).toEqual([{ host: 'memory', port: 5001 }]);
  });

  it('reads MEMORY_HOSTS in order, names, IPv4 and bracketed IPv6, while MEMORY_HOST/MEMORY_PORT stay the listener', () => {
    const config = loadConfig({ ...token, MEMORY_HOST: '0.0.0.0', MEMORY_HOSTS: ' memory-1:4001, 10.0.0.7:4101 ,[fd00::2]:4001' });
    expect(config.memory.replicas).toEqual([
      { host: 'memory-1', port: 4001 },
      { host: '10.0.0.7', port: 4101 },
      { host: 'fd00::2', port: 4001 },
    ]);
    expect(config.memory).toMatchObject({ host: '0.0.0.0', port: 4001 });
  });

  it('refuses an entry without a port, a port out of range, a repeated replica, and an empty list', () => {
    expect(() => loadConfig({ ...token, MEMORY_HOSTS: 'memory-1:4001,memory-2' })).toThrow(/MEMORY_HOSTS.*host:port/);
    expect(() => loadConfig({ ...token, MEMORY_HOSTS: 'memory-1:70000' })).toThrow(/MEMORY_HOSTS: memory-1:70000: the port must be 1-65535/);
    expect(() => loadConfig({ ...token, MEMORY_HOSTS: 'memory-1:4001,memory-1:4001' })).toThrow(/MEMORY_HOSTS names memory-1:4001 twice/);
    expect(() => loadConfig({ ...token, MEMORY_HOSTS: ' , ' })).toThrow(/MEMORY_HOSTS/);
  });

  it('refuses more than one replica without ENGRAM_INTERNAL_TOKEN: each would generate a token of its own', () => {
    expect(() => loadConfig({ MEMORY_HOSTS: 'memory-1:4001,memory-2:4001' })).toThrow(
      new ConfigError('invalid configuration: MEMORY_HOSTS names 2 memory replicas: set ENGRAM_INTERNAL_TOKEN, the same in every process'),
    );
    expect(loadConfig({ MEMORY_HOSTS: 'memory-1:4001' }).memory.replicas).toEqual([{ host: 'memory-1', port: 4001 }]);
  });
});

describe('loadConfig: event store', () => {
  it('is the data dir file log when unset', () => {
    expect(loadConfig({}).eventStore).toBeNull();
  });

  it('reads a postgres:// URL from the variable or from a file (a compose secret)', () => {
    const url = 'postgres://engram:s3cret@db:5432/engram';
    expect(loadConfig({ ENGRAM_EVENT_STORE: url }).eventStore).toEqual({ kind: 'postgres', url });
    const dir = mkdtempSync(join(tmpdir(), 'engram-store-'));
    try {
      writeFileSync(join(dir, 'url'), `${url}\n`);
      expect(loadConfig({ ENGRAM_EVENT_STORE_FILE: join(dir, 'url') }).eventStore).toEqual({ kind: 'postgres', url });
      expect(() => loadConfig({ ENGRAM_EVENT_STORE_FILE: join(dir, 'missing') })).toThrow(
        new ConfigError(`invalid configuration: ENGRAM_EVENT_STORE_FILE: cannot read ${join(dir, 'missing')} (ENOENT)`),
      );
      expect(() => loadConfig({ ENGRAM_EVENT_STORE: url, ENGRAM_EVENT_STORE_FILE: join(dir, 'url') })).toThrow(/both set/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what is not a postgres URL without echoing a password', () => {
    expect(() => loadConfig({ ENGRAM_EVENT_STORE: 'mysql://u:hunter2@db/engram' })).toThrow(/mysql:\/\/ is not supported/);
    let message = '';
    try {
      loadConfig({ ENGRAM_EVENT_STORE: 'hunter2 not a url' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/ENGRAM_EVENT_STORE: not a URL/);
    expect(message).not.toContain('hunter2');
    expect(redactedUrl('postgres://engram:hunter2@db:5432/engram')).toBe('postgres://engram:***@db:5432/engram');
  });
});
