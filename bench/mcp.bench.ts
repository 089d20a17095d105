/**
 * What MCP costs next to the memory REST surface, side by side in one run against one real stack
 * (Redis, memory, gateway as processes): a search as memory REST, as an MCP tool call over
 * Streamable HTTP (a fresh server per request: the stateless choice), and through the stdio bridge
 * (`engram mcp`, one more hop); plus what a client waits for a session to open, over HTTP and
 * from spawning the bridge. Calls alternate between the targets so load on the machine hits all alike.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { repoRoot } from '../tests/support/compose.js';
import { startRedis } from '../tests/support/redis.js';
import { startGateway, startMemory } from '../tests/support/stack.js';
import type { BenchRow } from './run.js';
import { median, percentile } from './stats.js';

const SUITE = 'mcp';
const ENTRIES = 500;
const ROUNDS = 1_000;
const SESSIONS = 40;

const elapsed = async (work: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};

export async function run(): Promise<BenchRow[]> {
  const redis = await startRedis();
  const memory = await startMemory({ REDIS_URL: redis.url });
  // No upstream is called: search and MCP stay inside Engram.
  const gateway = await startGateway({ UPSTREAM_BASE_URL: 'http://127.0.0.1:9/v1', REDIS_URL: redis.url, ...memory.clientEnv });
  const httpClient = (): Promise<Client> => connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/pools/bench/mcp`)));
  const bridgeClient = (): Promise<Client> =>
    connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(repoRoot, 'apps/memory/bin/engram.js'), 'mcp', '--url', gateway.url, '--pool', 'bench'],
        env: { PATH: process.env['PATH'] ?? '' },
      }),
    );
  const overHttp = await httpClient();
  const overBridge = await bridgeClient();
  try {
    for (let i = 0; i < ENTRIES; i++)
      await overHttp.callTool({
        name: 'store_memory',
        arguments: { content: `fact ${i}: service ${i % 37} runs on host ${i % 11} with port ${8000 + i}` },
      });
    const query = (i: number) => `service ${i % 37} host`;
    const targets: Record<string, (i: number) => Promise<unknown>> = {
      'memory REST': (i) =>
        fetch(`${gateway.url}/engram/pools/bench/memories?q=${encodeURIComponent(query(i))}&limit=5`).then((response) => response.json()),
      'MCP over HTTP': (i) => overHttp.callTool({ name: 'memory_search', arguments: { query: query(i) } }),
      'MCP via stdio bridge': (i) => overBridge.callTool({ name: 'memory_search', arguments: { query: query(i) } }),
    };
    const samples = Object.fromEntries(Object.keys(targets).map((name) => [name, [] as number[]]));
    for (let i = 0; i < 200; i++) for (const call of Object.values(targets)) await call(i);
    for (let i = 0; i < ROUNDS; i++) for (const [name, call] of Object.entries(targets)) samples[name]!.push(await elapsed(() => call(i)));

    const opens = { http: [] as number[], bridge: [] as number[] };
    for (let i = 0; i < SESSIONS; i++) {
      opens.http.push(await elapsed(async () => (await httpClient()).close()));
      opens.bridge.push(await elapsed(async () => (await bridgeClient()).close()));
    }
    const note = `search in a pool of ${ENTRIES}, limit 5, one call at a time`;
    return [
      ...Object.entries(samples).flatMap(([name, values]): BenchRow[] => [
        { suite: SUITE, metric: `search p50, ${name}`, value: median(values), unit: 'ms', note },
        { suite: SUITE, metric: `search p95, ${name}`, value: percentile(values, 95), unit: 'ms', note },
      ]),
      { suite: SUITE, metric: 'session open+close p50, HTTP', value: median(opens.http), unit: 'ms', note: 'initialize + initialized, then close' },
      {
        suite: SUITE,
        metric: 'session open+close p50, stdio bridge',
        value: median(opens.bridge),
        unit: 'ms',
        note: 'spawn node + initialize through the bridge, then close',
      },
    ];
  } finally {
    await Promise.allSettled([overHttp.close(), overBridge.close()]);
    await gateway.stop();
    await memory.stop();
    await redis.stop();
  }
}

async function connect(transport: StreamableHTTPClientTransport | StdioClientTransport): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
