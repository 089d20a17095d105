/**
 * Latency the gateway adds, measured against calling the scripted upstream directly in the same
 * run, alternating batches so both see the same machine load: non-streamed chat completions at
 * concurrency 32 (p50, p99) and streamed time to first byte, with Tier 1 injection on (a real
 * memory service holds entries for the pool, so every request carries a Tier 1 block and the
 * six memory tools).
 *
 *   npm run bench -- gateway
 */
import { cpus, loadavg } from 'node:os';
import { Pool } from 'undici';
import { startRedis } from '../tests/support/redis.js';
import { ScriptedOpenAiUpstream, say } from '../tests/support/scripted-openai-upstream.js';
import { startGateway, startMemory } from '../tests/support/stack.js';
import type { BenchRow } from './run.js';
import { percentile } from './stats.js';

const CONCURRENCY = 32;
const BATCH = 1_000;
const BATCHES = 6;
const STREAM_SAMPLES = 300;
const ANSWER = 'Engram keeps a little memory for you, and this is a short answer of typical size.';

const body = (stream: boolean): string =>
  JSON.stringify({
    model: 'gpt-bench',
    stream,
    messages: [
      { role: 'system', content: 'You are a helpful coding assistant. Answer briefly.' },
      { role: 'user', content: 'What shell do I use, and which editor do I prefer?' },
    ],
  });

/** Sends `count` requests with `concurrency` in flight; returns each one's latency in ms (to full body). */
async function load(pool: Pool, path: string, payload: string, count: number, concurrency: number): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      const started = performance.now();
      const response = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body: payload });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`${path} answered ${response.statusCode}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return latencies;
}

/** Time to the first streamed body byte, one request at a time. */
async function firstByte(pool: Pool, path: string, payload: string): Promise<number> {
  const started = performance.now();
  const response = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body: payload });
  let first = Number.NaN;
  for await (const _chunk of response.body) {
    if (Number.isNaN(first)) first = performance.now() - started;
  }
  return first;
}

export async function run(): Promise<BenchRow[]> {
  const redis = await startRedis();
  const upstream = await ScriptedOpenAiUpstream.start(() => say(ANSWER));
  const memory = await startMemory({ REDIS_URL: redis.url });
  const gateway = await startGateway({ UPSTREAM_BASE_URL: upstream.baseUrl, REDIS_URL: redis.url, LOG_LEVEL: 'warn', ...memory.clientEnv });
  const direct = new Pool(upstream.baseUrl.replace(/\/v1$/, ''), { connections: CONCURRENCY });
  const viaGateway = new Pool(gateway.url, { connections: CONCURRENCY });
  try {
    for (const content of ['The user prefers zsh on macOS.', 'The user prefers Neovim and short answers.']) {
      const stored = await fetch(`${gateway.url}/engram/pools/default/memories`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content, type: 'USER', category: 'preference' }),
      });
      if (stored.status !== 201) throw new Error(`could not store a bench memory: ${stored.status}`);
    }
    const tier1 = (await (await fetch(`${gateway.url}/engram/pools/default/tier1`)).json()) as { block: string };
    if (tier1.block === '') throw new Error('Tier 1 is empty: the bench would not measure injection');

    const plain = body(false);
    await load(direct, '/v1/chat/completions', plain, BATCH, CONCURRENCY);
    await load(viaGateway, '/v1/chat/completions', plain, BATCH, CONCURRENCY);
    const directMs: number[] = [];
    const gatewayMs: number[] = [];
    for (let batch = 0; batch < BATCHES; batch++) {
      directMs.push(...(await load(direct, '/v1/chat/completions', plain, BATCH, CONCURRENCY)));
      gatewayMs.push(...(await load(viaGateway, '/v1/chat/completions', plain, BATCH, CONCURRENCY)));
    }
    const upstreamSaw = upstream.chatRequests.at(-1)?.body.messages[0]?.content;
    if (typeof upstreamSaw !== 'string' || !upstreamSaw.includes('<engram-memory>')) throw new Error('Tier 1 was not injected during the bench');

    const directSequential: number[] = [];
    const gatewaySequential: number[] = [];
    for (let i = 0; i < STREAM_SAMPLES; i++) {
      directSequential.push(...(await load(direct, '/v1/chat/completions', plain, 1, 1)));
      gatewaySequential.push(...(await load(viaGateway, '/v1/chat/completions', plain, 1, 1)));
    }

    const streamed = body(true);
    const directTtfb: number[] = [];
    const gatewayTtfb: number[] = [];
    for (let i = 0; i < STREAM_SAMPLES; i++) {
      directTtfb.push(await firstByte(direct, '/v1/chat/completions', streamed));
      gatewayTtfb.push(await firstByte(viaGateway, '/v1/chat/completions', streamed));
    }

    const row = (metric: string, value: number, unit: string, target?: string, note?: string): BenchRow => ({
      suite: 'gateway',
      metric,
      value,
      unit,
      ...(target ? { target } : {}),
      ...(note ? { note } : {}),
    });
    const p = (samples: number[], q: number): number => percentile(samples, q);
    const note = `${BATCHES}x${BATCH} alternating, Tier 1 ${tier1.block.length} chars + 6 memory tools, load avg ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores`;
    return [
      row('direct p50 (c=32)', p(directMs, 50), 'ms'),
      row('gateway p50 (c=32)', p(gatewayMs, 50), 'ms'),
      row('added p50 (c=32)', p(gatewayMs, 50) - p(directMs, 50), 'ms', '<= 1', note),
      row('direct p99 (c=32)', p(directMs, 99), 'ms'),
      row('gateway p99 (c=32)', p(gatewayMs, 99), 'ms'),
      row('added p99 (c=32)', p(gatewayMs, 99) - p(directMs, 99), 'ms', '<= 5', note),
      row('gateway/direct p50 ratio (c=32)', p(gatewayMs, 50) / p(directMs, 50), 'x'),
      row('added p50 (c=1)', p(gatewaySequential, 50) - p(directSequential, 50), 'ms', undefined, `${STREAM_SAMPLES} sequential, alternating`),
      row('added p99 (c=1)', p(gatewaySequential, 99) - p(directSequential, 99), 'ms'),
      row('stream TTFB direct p50', p(directTtfb, 50), 'ms'),
      row('stream TTFB gateway p50', p(gatewayTtfb, 50), 'ms'),
      row('stream TTFB added p50', p(gatewayTtfb, 50) - p(directTtfb, 50), 'ms', undefined, `${STREAM_SAMPLES} sequential, alternating`),
      row('stream TTFB added p99', p(gatewayTtfb, 99) - p(directTtfb, 99), 'ms'),
    ];
  } finally {
    await direct.close();
    await viaGateway.close();
    await gateway.stop();
    await memory.stop();
    await upstream.close();
    await redis.stop();
  }
}
