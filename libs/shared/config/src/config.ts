import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { EncryptionKey } from './encryption-key.js';

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();
/** A DNS name, `.domain` (every name under it) or `*`: an entry of ENGRAM_ALLOWED_HOSTS. */
/** An entry of MEMORY_HOSTS: a name or IPv4 address, or a bracketed IPv6 address, and a port. */
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):\d{1,5}$/;
const HOST_NAME = /^(\*|\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*)$/;

/** The one schema of Engram's environment (docs/DESIGN.md, "Configuration"). Each entry point hands process.env to loadConfig; nothing else interprets it. */
const EnvSchema = z.object({
  ENGRAM_DATA_DIR: z.string().min(1).default('./data'),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  GATEWAY_HOST: z.string().default('127.0.0.1'),
  GATEWAY_PORT: port.default(8080),
  MEMORY_HOST: z.string().default('127.0.0.1'),
  MEMORY_PORT: port.default(4001),
  MEMORY_HOSTS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    )
    .pipe(z.array(z.string().regex(HOST_PORT, 'each entry must be host:port (memory-1:4001), comma-separated')).min(1))
    .optional(),
  MEMORY_HEALTH_PORT: port.default(4002),
  MEMORY_RPC_TIMEOUT_MS: positiveInt.default(1_500),
  UPSTREAM_BASE_URL: z.string().url().default('https://api.openai.com/v1'),
  UPSTREAM_API_KEY: z.string().optional(),
  UPSTREAM_TIMEOUT_MS: positiveInt.default(600_000),
  ANTHROPIC_UPSTREAM_BASE_URL: z.string().url().default('https://api.anthropic.com'),
  ANTHROPIC_UPSTREAM_API_KEY: z.string().optional(),
  ENGRAM_API_KEYS: z.string().optional(),
  ENGRAM_ALLOWED_HOSTS: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim().toLowerCase())
        .filter((entry) => entry !== ''),
    )
    .pipe(z.array(z.string().regex(HOST_NAME, 'each entry must be a host name without port (engram.lan), .domain for every name under it, or *')))
    .default([]),
  METRICS_TOKEN: z.string().optional(),
  ENGRAM_INTERNAL_TOKEN: z.string().min(16).optional(),
  TIER1_MAX_CHARS: positiveInt.default(400),
  MEMORY_TOOL_MAX_ITERATIONS: z.coerce.number().int().min(0).default(3),
  CONSOLIDATION_MODEL: z.string().default('gpt-4.1-nano'),
  CONSOLIDATION_THRESHOLD: positiveInt.default(20),
  DECAY_EVERY_MS: positiveInt.default(3_600_000),
  WORKER_QUEUES: z.string().default('*'),
  EMBEDDINGS_BASE_URL: z.string().url().optional(),
  EMBEDDINGS_API_KEY: z.string().optional(),
  EMBEDDINGS_MODEL: z.string().min(1).default('text-embedding-3-small'),
  EMBEDDINGS_QUERY_TIMEOUT_MS: positiveInt.default(800),
  EMBEDDINGS_MIN_SIMILARITY: z.coerce.number().min(-1).max(1).default(0.3),
  EMBEDDINGS_MODEL_DIR: z.string().min(1).optional(),
  EMBEDDINGS_THREADS: positiveInt.optional(),
  WORKER_HEALTH_PORT: port.default(4003),
  ENGRAM_ENCRYPTION_KEY: z.string().optional(),
  ENGRAM_ENCRYPTION_KEY_FILE: z.string().optional(),
  ENGRAM_EVENT_STORE: z.string().optional(),
  ENGRAM_EVENT_STORE_FILE: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.infer<typeof EnvSchema>;

export interface EngramConfig {
  readonly dataDir: string;
  readonly redisUrl: string;
  readonly logLevel: Env['LOG_LEVEL'];
  readonly gateway: { readonly host: string; readonly port: number };
  readonly memory: {
    /** Where `memory` listens (MEMORY_HOST/MEMORY_PORT). */
    readonly host: string;
    readonly port: number;
    /**
     * The memory replicas the gateway and worker call: MEMORY_HOSTS in order, or the one at
     * MEMORY_HOST/MEMORY_PORT. More than one share one event store (ENGRAM_EVENT_STORE).
     */
    readonly replicas: readonly MemoryAddress[];
    readonly healthPort: number;
    readonly rpcTimeoutMs: number;
  };
  readonly upstream: {
    readonly baseUrl: string;
    readonly apiKey: string | undefined;
    readonly timeoutMs: number;
    readonly anthropicBaseUrl: string;
    readonly anthropicApiKey: string | undefined;
  };
  /** Raw `key1=work+home,key2=*`; parsed by the gateway's auth. Undefined: open mode. */
  readonly apiKeys: string | undefined;
  /** Host names an open gateway answers besides IP addresses and localhost (DNS rebinding guard); `*`: any. */
  readonly allowedHosts: readonly string[];
  /** Bearer that reads `/metrics` (besides any Engram key). Undefined: Engram keys only, or open in open mode. */
  readonly metricsToken: string | undefined;
  /** Credential of every memory RPC call. Undefined: memory generates one into the data dir, the others read it there. */
  readonly internalToken: string | undefined;
  readonly tier1MaxChars: number;
  readonly memoryToolMaxIterations: number;
  readonly consolidation: { readonly model: string; readonly threshold: number };
  readonly worker: { readonly queues: string; readonly decayEveryMs: number; readonly healthPort: number };
  /**
   * Hybrid search, embedding through an OpenAI-compatible `/v1/embeddings` or in-process with a model
   * folder; null (the default): lexical search only.
   */
  readonly embeddings: EmbeddingsConfig | null;
  /**
   * The at-rest key (ENGRAM_ENCRYPTION_KEY, or the file ENGRAM_ENCRYPTION_KEY_FILE names): with it, the
   * data dir's databases have their pages encrypted. Null (the default): everything is written in the clear.
   */
  readonly encryptionKey: EncryptionKey | null;
  /**
   * Where the events are kept (ENGRAM_EVENT_STORE, or the file ENGRAM_EVENT_STORE_FILE names): null (the
   * default) is the data dir's file log; a `postgres://` URL is a PostgreSQL table shared by every
   * memory replica pointed at it, each keeping its read model in its own data dir.
   */
  readonly eventStore: EventStoreConfig | null;
}

/** ENGRAM_EVENT_STORE=postgres://…: the source of truth is a PostgreSQL table. */
export interface EventStoreConfig {
  readonly kind: 'postgres';
  /** The connection URL, password included: never logged (see redactedUrl). */
  readonly url: string;
}

export interface MemoryAddress {
  readonly host: string;
  readonly port: number;
}

export type EmbeddingsConfig = EndpointEmbeddingsConfig | ModelDirEmbeddingsConfig;

/** What hybrid search does with vectors, wherever they come from. */
interface HybridSearchConfig {
  /** How long a search waits for its query's embedding before answering by words alone. */
  readonly queryTimeoutMs: number;
  /**
   * Vector neighbours less similar (cosine) than this are not returned, so a question nothing
   * answers gets no neighbours rather than the least unrelated ones. Model-dependent: README, "Hybrid search".
   */
  readonly minSimilarity: number;
}

/** EMBEDDINGS_BASE_URL: vectors from an OpenAI-compatible endpoint. */
export interface EndpointEmbeddingsConfig extends HybridSearchConfig {
  readonly kind: 'endpoint';
  /** Up to and including `/v1`, without a trailing slash. */
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  readonly model: string;
}

/** EMBEDDINGS_MODEL_DIR: vectors from an ONNX sentence-embedding model run in each process that embeds. */
export interface ModelDirEmbeddingsConfig extends HybridSearchConfig {
  readonly kind: 'model-dir';
  /** The folder with model.onnx (or onnx/model.onnx) and tokenizer.json. */
  readonly dir: string;
  /** Threads one run may use; undefined: one per core. */
  readonly threads: number | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Validates an environment into the typed config; throws ConfigError naming every bad variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): EngramConfig {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  if (e.EMBEDDINGS_BASE_URL && e.EMBEDDINGS_MODEL_DIR) {
    throw new ConfigError(
      'invalid configuration: EMBEDDINGS_BASE_URL and EMBEDDINGS_MODEL_DIR are both set; set one (an endpoint, or a model folder)',
    );
  }
  const encryptionKey = encryptionKeyOf(e);
  const replicas = e.MEMORY_HOSTS?.map(memoryAddressOf) ?? [{ host: e.MEMORY_HOST, port: e.MEMORY_PORT }];
  const named = replicas.map(({ host, port }) => `${host}:${port}`);
  const repeated = named.find((address, index) => named.indexOf(address) !== index);
  if (repeated) throw new ConfigError(`invalid configuration: MEMORY_HOSTS names ${repeated} twice`);
  if (replicas.length > 1 && e.ENGRAM_INTERNAL_TOKEN === undefined) {
    // Each replica has a data dir of its own, so each would generate a token of its own.
    throw new ConfigError(
      `invalid configuration: MEMORY_HOSTS names ${replicas.length} memory replicas: set ENGRAM_INTERNAL_TOKEN, the same in every process`,
    );
  }
  const eventStore = eventStoreOf(e);
  return {
    dataDir: e.ENGRAM_DATA_DIR,
    redisUrl: e.REDIS_URL,
    logLevel: e.LOG_LEVEL,
    gateway: { host: e.GATEWAY_HOST, port: e.GATEWAY_PORT },
    memory: {
      host: e.MEMORY_HOST,
      port: e.MEMORY_PORT,
      replicas,
      healthPort: e.MEMORY_HEALTH_PORT,
      rpcTimeoutMs: e.MEMORY_RPC_TIMEOUT_MS,
    },
    upstream: {
      baseUrl: e.UPSTREAM_BASE_URL.replace(/\/+$/, ''),
      apiKey: e.UPSTREAM_API_KEY,
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
      anthropicBaseUrl: e.ANTHROPIC_UPSTREAM_BASE_URL.replace(/\/+$/, ''),
      anthropicApiKey: e.ANTHROPIC_UPSTREAM_API_KEY,
    },
    apiKeys: e.ENGRAM_API_KEYS,
    allowedHosts: e.ENGRAM_ALLOWED_HOSTS,
    metricsToken: e.METRICS_TOKEN,
    internalToken: e.ENGRAM_INTERNAL_TOKEN,
    tier1MaxChars: e.TIER1_MAX_CHARS,
    memoryToolMaxIterations: e.MEMORY_TOOL_MAX_ITERATIONS,
    consolidation: { model: e.CONSOLIDATION_MODEL, threshold: e.CONSOLIDATION_THRESHOLD },
    worker: { queues: e.WORKER_QUEUES, decayEveryMs: e.DECAY_EVERY_MS, healthPort: e.WORKER_HEALTH_PORT },
    embeddings: embeddingsConfig(e),
    encryptionKey,
    eventStore,
  };
}

function memoryAddressOf(entry: string): MemoryAddress {
  const colon = entry.lastIndexOf(':');
  const port = Number(entry.slice(colon + 1));
  if (port < 1 || port > 65_535) throw new ConfigError(`invalid configuration: MEMORY_HOSTS: ${entry}: the port must be 1-65535`);
  return { host: entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port };
}

/** The event store's URL from the variable or from the file it is in (a compose secret: it holds the password). */
function eventStoreOf(e: Env): EventStoreConfig | null {
  if (e.ENGRAM_EVENT_STORE !== undefined && e.ENGRAM_EVENT_STORE_FILE !== undefined) {
    throw new ConfigError('invalid configuration: ENGRAM_EVENT_STORE and ENGRAM_EVENT_STORE_FILE are both set; set one');
  }
  let url = e.ENGRAM_EVENT_STORE;
  let name = 'ENGRAM_EVENT_STORE';
  if (e.ENGRAM_EVENT_STORE_FILE !== undefined) {
    name = 'ENGRAM_EVENT_STORE_FILE';
    try {
      url = readFileSync(e.ENGRAM_EVENT_STORE_FILE, 'utf8').trim();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new ConfigError(`invalid configuration: ENGRAM_EVENT_STORE_FILE: cannot read ${e.ENGRAM_EVENT_STORE_FILE} (${code})`);
    }
  }
  if (url === undefined || url === '') return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`invalid configuration: ${name}: not a URL (expected postgres://user:password@host:5432/database)`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError(
      `invalid configuration: ${name}: ${parsed.protocol}// is not supported (expected postgres://user:password@host:5432/database)`,
    );
  }
  return { kind: 'postgres', url };
}

/** The URL without its password, for logs and messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/** The key from the variable or from the file it is in (a compose secret, a key file outside the data volume). */
function encryptionKeyOf(e: Env): EncryptionKey | null {
  if (e.ENGRAM_ENCRYPTION_KEY !== undefined && e.ENGRAM_ENCRYPTION_KEY_FILE !== undefined) {
    throw new ConfigError('invalid configuration: ENGRAM_ENCRYPTION_KEY and ENGRAM_ENCRYPTION_KEY_FILE are both set; set one');
  }
  let text = e.ENGRAM_ENCRYPTION_KEY;
  let name = 'ENGRAM_ENCRYPTION_KEY';
  if (e.ENGRAM_ENCRYPTION_KEY_FILE !== undefined) {
    name = 'ENGRAM_ENCRYPTION_KEY_FILE';
    try {
      text = readFileSync(e.ENGRAM_ENCRYPTION_KEY_FILE, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new ConfigError(`invalid configuration: ENGRAM_ENCRYPTION_KEY_FILE: cannot read ${e.ENGRAM_ENCRYPTION_KEY_FILE} (${code})`);
    }
  }
  if (text === undefined) return null;
  try {
    return EncryptionKey.parse(text);
  } catch (error) {
    throw new ConfigError(`invalid configuration: ${name}: ${(error as Error).message}`);
  }
}

function embeddingsConfig(e: Env): EmbeddingsConfig | null {
  if (e.EMBEDDINGS_MODEL_DIR) {
    return {
      kind: 'model-dir',
      dir: e.EMBEDDINGS_MODEL_DIR,
      threads: e.EMBEDDINGS_THREADS,
      queryTimeoutMs: e.EMBEDDINGS_QUERY_TIMEOUT_MS,
      minSimilarity: e.EMBEDDINGS_MIN_SIMILARITY,
    };
  }
  if (e.EMBEDDINGS_BASE_URL) {
    return {
      kind: 'endpoint',
      baseUrl: e.EMBEDDINGS_BASE_URL.replace(/\/+$/, ''),
      apiKey: e.EMBEDDINGS_API_KEY,
      model: e.EMBEDDINGS_MODEL,
      queryTimeoutMs: e.EMBEDDINGS_QUERY_TIMEOUT_MS,
      minSimilarity: e.EMBEDDINGS_MIN_SIMILARITY,
    };
  }
  return null;
}
