/**
 * Latency the gateway adds, measured against calling the scripted upstream directly in the same
 * run, alternating batches so both see the same machine load, with Tier 1 injection on (a real
 * memory service holds entries for the pool, so every request carries a Tier 1 block and the six
 * memory tools):
 * - non-streamed chat completions at concurrency 32, twice: with an upstream that takes 10 to 30 ms
 *   to answer, and with one that answers at once.
 *   In the first, each request names its own think time (`metadata.delay_ms`, which the gateway
 *   passes through untouched) and the bench subtracts it, so the figures are the time a request
 *   spends outside the model, identical think times for every target. Drawn think times in whole
 *   ms would otherwise move a p50 by whole ms between runs. Think times are spread (never the
 *   same twice in a row) and the 32 clients start spread over one think time: 32 clients started in
 *   the same millisecond, or a fixed delay, would march in lockstep, each burst of 32 queueing
 *   behind itself, which no set of real tools does.
 *   The second is a throughput test in disguise: client, upstream and gateway share two cores, so
 *   at 32 in flight a request mostly waits for CPU (latency = 32 / throughput). Its rows come with
 *   the CPU time per request of the gateway and of the bench process (client + upstream), which
 *   explain it (medians over the batches; ENGRAM_BENCH_BASELINE adds another checkout's gateway);
 * - concurrency 1 and streamed time to first byte, one request at a time.
 *
 *   npm run bench -- gateway
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startRedis } from '../tests/support/redis.js';
import { sleep } from '../tests/support/scripted-http.js';
import { ScriptedOpenAiUpstream, say } from '../tests/support/scripted-openai-upstream.js';
import { startGateway, startMemory, type RunningGateway } from '../tests/support/stack.js';
import type { BenchRow } from './run.js';
import { median, percentile } from './stats.js';

const CONCURRENCY = 32;
const BATCH = 1_000;
const BATCHES = 6;
/** The model-like think times: 10..30 ms, so the 21 request bodies below, one per think time. */
const THINK_MS = Array.from({ length: 21 }, (_, index) => 10 + index);
/** Client `worker`'s `k`-th think time: a fixed sequence, different per client, never the same twice in a row. */
const thinkIndex = (worker: number, k: number): number => (worker * 7 + k * 2) % THINK_MS.length;
const MODEL_BATCH = 640;
const WARMUP_REQUESTS = 8_000;
const SEQUENTIAL_SAMPLES = 300;
const SEQUENTIAL_THINKING_SAMPLES = 150;
const SEQUENTIAL_RUN = 50;
const ANSWER = 'Engram keeps a little memory for you, and this is a short answer of typical size.';
/**
 * Another checkout, built (`npm run build` there): its gateway joins the instant-upstream scenario as
 * one more target, alternating with the others, so a change's before and after come from one run.
 *   ENGRAM_BENCH_BASELINE=../engram-before npm run bench -- gateway
 */
const BASELINE = process.env['ENGRAM_BENCH_BASELINE'];

const body = (stream: boolean, thinkMs?: number): string =>
  JSON.stringify({
    model: 'gpt-bench',
    stream,
    ...(thinkMs === undefined ? {} : { metadata: { delay_ms: String(thinkMs) } }),
    messages: [
      { role: 'system', content: 'You are a helpful coding assistant. Answer briefly.' },
      { role: 'user', content: 'What shell do I use, and which editor do I prefer?' },
    ],
  });

/** What the bench clients send: client `worker`'s `k`-th body and the think time it asks of the upstream. */
interface Payload {
  readonly request: (worker: number, k: number) => { readonly body: string; readonly thinkMs: number };
  /** The clients' first requests are spread over this many ms. */
  readonly staggerMs: number;
}

const fixed = (payload: string): Payload => ({ request: () => ({ body: payload, thinkMs: 0 }), staggerMs: 0 });

/** Model-like requests: each asks for its own think time (10-30 ms); clients start spread over the mean think time. */
function thinking(): Payload {
  const bodies = THINK_MS.map((ms) => body(false, ms));
  return {
    request: (worker, k) => {
      const index = thinkIndex(worker, k);
      return { body: bodies[index] as string, thinkMs: THINK_MS[index] as number };
    },
    staggerMs: 20,
  };
}

/** The think time a request asks for, from the body `thinking()` builds. */
function thinkMsOf(requestBody: Record<string, unknown>): number {
  return Number((requestBody['metadata'] as { delay_ms?: string } | undefined)?.delay_ms ?? 0);
}

/** One chat completion request from a bench client. */
function post(pool: Pool, requestBody: string, headers: Readonly<Record<string, string>> = {}): ReturnType<Pool['request']> {
  return pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench', ...headers },
    body: requestBody,
  });
}

/** Sends `count` requests with `concurrency` in flight; returns each one's latency in ms (to full body) less its think time. */
async function load(
  pool: Pool,
  payload: Payload,
  count: number,
  concurrency: number,
  headers: Readonly<Record<string, string>> = {},
): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const client = async (worker: number): Promise<void> => {
    if (payload.staggerMs > 0) await sleep((payload.staggerMs * worker) / concurrency);
    for (let k = 0; next < count; k++) {
      next++;
      const { body: requestBody, thinkMs } = payload.request(worker, k);
      const started = performance.now();
      const response = await post(pool, requestBody, headers);
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`answered ${response.statusCode}`);
      latencies.push(performance.now() - started - thinkMs);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, worker) => client(worker)));
  return latencies;
}

/** Time to the first streamed body byte. */
async function firstByte(pool: Pool, payload: string): Promise<number> {
  const started = performance.now();
  const response = await post(pool, payload);
  let first = Number.NaN;
  for await (const _chunk of response.body) {
    if (Number.isNaN(first)) first = performance.now() - started;
  }
  return first;
}

/**
 * CPU time a process's threads have run so far, in microseconds, from the scheduler's nanosecond
 * counts (Linux): /proc's stat counts whole 10 ms ticks, 10 µs per request over a batch of 1,000.
 */
function processCpuMicros(pid: number): number {
  let nanos = 0;
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanos += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return nanos / 1_000;
}

function benchCpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

interface Target {
  readonly pool: Pool;
  /** The proxy process whose CPU time is counted, if any. */
  readonly pid?: number;
  /** Sent with every request (e.g. `x-engram-memory: off`). */
  readonly headers?: Readonly<Record<string, string>>;
}

interface TargetRun {
  readonly ms: number[];
  /** CPU time per request, µs, the median over the batches: the proxy process, and this process (client + upstream). */
  readonly proxyCpuUs: number;
  readonly benchCpuUs: number;
}

/**
 * Alternating batches over the targets, after a warm-up of each: a process's CPU per request
 * falls by two thirds over its first ~6,000 requests while V8 optimises the hot path (the
 * gateway's from ~380 to ~120 µs), and a gateway that serves all day runs optimised code.
 * Warm-up requests ask for no think time, so the model-like upstream answers them at once.
 */
async function alternate(targets: readonly Target[], payload: Payload, batch: number, batches: number): Promise<TargetRun[]> {
  for (const target of targets) await load(target.pool, fixed(body(false)), WARMUP_REQUESTS, CONCURRENCY, target.headers);
  const runs = targets.map(() => ({ ms: [] as number[], proxyCpu: [] as number[], benchCpu: [] as number[] }));
  for (let i = 0; i < batches; i++) {
    for (const [index, target] of targets.entries()) {
      const run = runs[index] as (typeof runs)[number];
      const bench = benchCpuMicros();
      const proxy = target.pid ? processCpuMicros(target.pid) : 0;
      run.ms.push(...(await load(target.pool, payload, batch, CONCURRENCY, target.headers)));
      run.proxyCpu.push(target.pid ? (processCpuMicros(target.pid) - proxy) / batch : 0);
      run.benchCpu.push((benchCpuMicros() - bench) / batch);
    }
  }
  // Medians: a batch during which another job on the machine took the caches or the cores says little.
  return runs.map((run) => ({ ms: run.ms, proxyCpuUs: median(run.proxyCpu), benchCpuUs: median(run.benchCpu) }));
}

/** The baseline checkout's gateway entry point, as startGateway takes it (relative to this checkout's apps/gateway/dist). */
function baselineEntry(checkout: string): string {
  const ours = fileURLToPath(new URL('../apps/gateway/dist/', import.meta.url));
  return relative(ours, resolve(checkout, 'apps/gateway/dist/main.js'));
}

/** The bare proxy (bench/support/bare-proxy.mjs) in front of `upstream`, as a child process. */
async function startBareProxy(upstream: ScriptedOpenAiUpstream, tier1Chars: number): Promise<{ readonly child: ChildProcess; readonly url: string }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./support/bare-proxy.mjs', import.meta.url))], {
    env: { PATH: process.env['PATH'] ?? '', UPSTREAM: new URL(upstream.baseUrl).origin, TIER1_CHARS: String(tier1Chars) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`the bare proxy exited (${code})`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

export async function run(): Promise<BenchRow[]> {
  const redis = await startRedis();
  // The bench sends tens of thousands of requests: the upstreams keep only the last few.
  const modelLike = await ScriptedOpenAiUpstream.start((request) => say(ANSWER, { delayMs: thinkMsOf(request.body) }), { keepRequests: 10 });
  const instant = await ScriptedOpenAiUpstream.start(() => say(ANSWER), { keepRequests: 10 });
  const memory = await startMemory({ REDIS_URL: redis.url });
  const env = { REDIS_URL: redis.url, LOG_LEVEL: 'warn', ...memory.clientEnv };
  const modelGateway = await startGateway({ ...env, UPSTREAM_BASE_URL: modelLike.baseUrl });
  const gateway = await startGateway({ ...env, UPSTREAM_BASE_URL: instant.baseUrl });
  const baselineGateway = BASELINE
    ? await startGateway({ ...env, UPSTREAM_BASE_URL: instant.baseUrl }, { entry: baselineEntry(BASELINE) })
    : undefined;
  const bareProxies: ChildProcess[] = [];
  const pools: Pool[] = [];
  const target = (url: string, pid?: number, headers?: Readonly<Record<string, string>>): Target => {
    const pool = new Pool(new URL(url).origin, { connections: CONCURRENCY });
    pools.push(pool);
    return { pool, ...(pid === undefined ? {} : { pid }), ...(headers ? { headers } : {}) };
  };
  /**
   * Direct, via the gateway, via the bare proxy: the three targets, then their alternating batches;
   * with `memoryOff`, one more: the same gateway asked to relay without memory (`x-engram-memory: off`);
   * with `baseline`, one more: the baseline checkout's gateway, with memory.
   */
  const scenario = async (
    upstream: ScriptedOpenAiUpstream,
    via: RunningGateway,
    tier1Chars: number,
    payload: Payload,
    batch: number,
    extra: { readonly memoryOff?: boolean; readonly baseline?: RunningGateway } = {},
  ): Promise<{ targets: Target[]; runs: [TargetRun, TargetRun, TargetRun]; memoryOff?: TargetRun; baseline?: TargetRun }> => {
    const bare = await startBareProxy(upstream, tier1Chars);
    bareProxies.push(bare.child);
    const pid = via.process.child.pid;
    const targets = [target(upstream.baseUrl), target(via.url, pid), target(bare.url, bare.child.pid)];
    const off = extra.memoryOff ? target(via.url, pid, { 'x-engram-memory': 'off' }) : undefined;
    const baseline = extra.baseline ? target(extra.baseline.url, extra.baseline.process.child.pid) : undefined;
    // The bare proxy stays last: the upstream's last request is checked for a Tier 1 block below.
    const order = [targets[0]!, targets[1]!, ...(off ? [off] : []), ...(baseline ? [baseline] : []), targets[2]!];
    const runs = await alternate(order, payload, batch, BATCHES);
    const runOf = (wanted: Target | undefined): TargetRun | undefined => (wanted ? runs[order.indexOf(wanted)] : undefined);
    const [direct, viaGateway, viaBare] = [runOf(targets[0]), runOf(targets[1]), runOf(targets[2])];
    if (!direct || !viaGateway || !viaBare) throw new Error('a bench target gave no samples');
    const withoutMemory = runOf(off);
    const before = runOf(baseline);
    return {
      targets,
      runs: [direct, viaGateway, viaBare],
      ...(withoutMemory ? { memoryOff: withoutMemory } : {}),
      ...(before ? { baseline: before } : {}),
    };
  };
  /** One request at a time, `samples` per target, in alternating runs of 50; each target's latencies. */
  const sequential = async (targets: readonly Target[], payload: Payload, samples: number): Promise<number[][]> => {
    const latencies = targets.map((): number[] => []);
    for (let done = 0; done < samples; done += SEQUENTIAL_RUN) {
      for (const [index, { pool }] of targets.entries()) latencies[index]?.push(...(await load(pool, payload, SEQUENTIAL_RUN, 1)));
    }
    return latencies;
  };
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

    const model = await scenario(modelLike, modelGateway, tier1.block.length, thinking(), MODEL_BATCH);
    const instantRun = await scenario(instant, gateway, tier1.block.length, fixed(body(false)), BATCH, {
      memoryOff: true,
      ...(baselineGateway ? { baseline: baselineGateway } : {}),
    });
    for (const upstream of [modelLike, instant]) {
      const seen = upstream.chatRequests.at(-1)?.body.messages[0]?.content;
      if (typeof seen !== 'string' || !seen.includes('<engram-memory>')) throw new Error('Tier 1 was not injected during the bench');
    }
    const [directSequential = [], gatewaySequential = [], bareSequential = []] = await sequential(
      instantRun.targets,
      fixed(body(false)),
      SEQUENTIAL_SAMPLES,
    );
    const [directThinking = [], gatewayThinking = [], bareThinking = []] = await sequential(model.targets, thinking(), SEQUENTIAL_THINKING_SAMPLES);
    const [direct, viaGateway] = instantRun.targets as [Target, Target];
    const streamed = body(true);
    const directTtfb: number[] = [];
    const gatewayTtfb: number[] = [];
    for (let i = 0; i < SEQUENTIAL_SAMPLES; i++) {
      directTtfb.push(await firstByte(direct.pool, streamed));
      gatewayTtfb.push(await firstByte(viaGateway.pool, streamed));
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
    const machine = `Tier 1 ${tier1.block.length} chars + 6 memory tools, load avg ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores`;
    /**
     * The concurrency-32 rows of one scenario: direct, gateway, the target rows, the bare-proxy floor.
     * Against the model-like upstream the latencies are time outside the model (think time subtracted),
     * so a gateway/direct ratio of them would say nothing: that ratio comes with the instant upstream only.
     */
    const scenarioRows = (
      label: string,
      note: string,
      [direct, viaGateway, viaBare]: readonly [TargetRun, TargetRun, TargetRun],
      ratio: boolean,
    ): BenchRow[] => [
      row(`direct p50 (c=32, ${label})`, p(direct.ms, 50), 'ms'),
      row(`gateway p50 (c=32, ${label})`, p(viaGateway.ms, 50), 'ms'),
      row(`added p50 (c=32, ${label})`, p(viaGateway.ms, 50) - p(direct.ms, 50), 'ms', '<= 1', note),
      row(`added p99 (c=32, ${label})`, p(viaGateway.ms, 99) - p(direct.ms, 99), 'ms', '<= 5', note),
      ...(ratio ? [row(`gateway/direct p50 ratio (c=32, ${label})`, p(viaGateway.ms, 50) / p(direct.ms, 50), 'x')] : []),
      row(`bare proxy added p50 (c=32, ${label})`, p(viaBare.ms, 50) - p(direct.ms, 50), 'ms', undefined, 'bench/support/bare-proxy.mjs: the floor'),
      row(`bare proxy added p99 (c=32, ${label})`, p(viaBare.ms, 99) - p(direct.ms, 99), 'ms'),
    ];
    return [
      ...scenarioRows(
        '10-30 ms model, time outside the model',
        `upstream thinks 10-30 ms per request, subtracted; ${BATCHES}x${MODEL_BATCH} alternating; ${machine}`,
        model.runs,
        false,
      ),
      ...scenarioRows('instant upstream', `upstream answers at once: CPU-bound; ${BATCHES}x${BATCH} alternating; ${machine}`, instantRun.runs, true),
      row('gateway CPU per request', instantRun.runs[1].proxyCpuUs, 'µs', undefined, 'instant upstream, c=32, median of the batches'),
      row('bare proxy CPU per request', instantRun.runs[2].proxyCpuUs, 'µs', undefined, 'instant upstream, c=32, median of the batches'),
      row(
        'gateway CPU per request, memory off',
        instantRun.memoryOff?.proxyCpuUs ?? Number.NaN,
        'µs',
        undefined,
        'the same gateway, x-engram-memory: off (relayed as sent: no Tier 1, no tools, no parse of the answer), alternating with the rows above',
      ),
      row(
        'gateway/bare proxy CPU per request',
        instantRun.runs[1].proxyCpuUs / instantRun.runs[2].proxyCpuUs,
        'x',
        '<= 1.3',
        'with memory, the same run (issue 21)',
      ),
      ...(instantRun.baseline
        ? [
            row(
              'baseline gateway CPU per request',
              instantRun.baseline.proxyCpuUs,
              'µs',
              undefined,
              `ENGRAM_BENCH_BASELINE=${BASELINE}, with memory, alternating with the rows above`,
            ),
            row('baseline gateway/bare proxy CPU per request', instantRun.baseline.proxyCpuUs / instantRun.runs[2].proxyCpuUs, 'x'),
          ]
        : []),
      row('bench CPU per request, direct', instantRun.runs[0].benchCpuUs, 'µs', undefined, 'client + upstream, in this process'),
      row(
        'bench CPU per request, via gateway',
        instantRun.runs[1].benchCpuUs,
        'µs',
        undefined,
        'client + upstream (larger requests: Tier 1 + tools)',
      ),
      row(
        'added p50 (c=1)',
        p(gatewaySequential, 50) - p(directSequential, 50),
        'ms',
        undefined,
        `${SEQUENTIAL_SAMPLES} sequential, alternating, instant upstream`,
      ),
      row('added p99 (c=1)', p(gatewaySequential, 99) - p(directSequential, 99), 'ms'),
      row('bare proxy added p50 (c=1)', p(bareSequential, 50) - p(directSequential, 50), 'ms'),
      row(
        'added p50 (c=1, 10-30 ms model, time outside the model)',
        p(gatewayThinking, 50) - p(directThinking, 50),
        'ms',
        undefined,
        `${SEQUENTIAL_THINKING_SAMPLES} sequential, alternating: every request finds the proxy idle`,
      ),
      row('bare proxy added p50 (c=1, 10-30 ms model, time outside the model)', p(bareThinking, 50) - p(directThinking, 50), 'ms'),
      row('stream TTFB direct p50', p(directTtfb, 50), 'ms'),
      row('stream TTFB gateway p50', p(gatewayTtfb, 50), 'ms'),
      row(
        'stream TTFB added p50',
        p(gatewayTtfb, 50) - p(directTtfb, 50),
        'ms',
        undefined,
        `${SEQUENTIAL_SAMPLES} sequential, alternating, instant upstream`,
      ),
      row('stream TTFB added p99', p(gatewayTtfb, 99) - p(directTtfb, 99), 'ms'),
    ];
  } finally {
    for (const child of bareProxies) child.kill();
    await Promise.all(pools.map((pool) => pool.close()));
    await Promise.all([modelGateway.stop(), gateway.stop(), baselineGateway?.stop()]);
    await memory.stop();
    await Promise.all([modelLike.close(), instant.close()]);
    await redis.stop();
  }
}
