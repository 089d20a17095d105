import { JobName, QueueName } from '@engram/jobs';
import { Queue } from 'bullmq';
import { expect } from '@jest/globals';
import { eventually } from '@engram/testing';
import { startRedis, type TestRedis } from './redis.js';
import { ScriptedAnthropicUpstream, type ScriptedAnthropicOptions } from './scripted-anthropic-upstream.js';
import { ScriptedResponsesUpstream, type ScriptedResponsesOptions } from './scripted-responses-upstream.js';
import { startGateway, startMemory, type RunningGateway, type RunningMemory } from './stack.js';
import { startParts } from './started-parts.js';

/** Real Redis, memory and gateway, with scripted Anthropic and Responses upstreams behind it. */
export interface SurfacesStack {
  readonly redis: TestRedis;
  readonly memory: RunningMemory;
  readonly anthropic: ScriptedAnthropicUpstream;
  readonly responses: ScriptedResponsesUpstream;
  readonly gateway: RunningGateway;
  stop(): Promise<void>;
}

export interface SurfacesStackOptions {
  readonly gatewayEnv?: Readonly<Record<string, string>>;
  readonly anthropic?: ScriptedAnthropicOptions;
  readonly responses?: ScriptedResponsesOptions;
}

export function startSurfacesStack(options: SurfacesStackOptions = {}): Promise<SurfacesStack> {
  return startParts(async (parts) => {
    const redis = parts.add(await startRedis(), (started) => started.stop());
    const anthropic = parts.add(await ScriptedAnthropicUpstream.start(options.anthropic), (started) => started.close());
    const responses = parts.add(await ScriptedResponsesUpstream.start(options.responses), (started) => started.close());
    const memory = parts.add(await startMemory({ REDIS_URL: redis.url }), (started) => started.stop());
    const gateway = parts.add(
      await startGateway({
        REDIS_URL: redis.url,
        ...memory.clientEnv,
        MEMORY_RPC_TIMEOUT_MS: '1000',
        UPSTREAM_BASE_URL: responses.url,
        ANTHROPIC_UPSTREAM_BASE_URL: anthropic.url,
        // Scripted upstreams answer at once; a short deadline lets the timeout test run quickly.
        UPSTREAM_TIMEOUT_MS: '2500',
        ...options.gatewayEnv,
      }),
      (started) => started.stop(),
    );
    return { redis, memory, anthropic, responses, gateway, stop: () => parts.stopAll() };
  });
}

/** The marker's content reached the worker's extraction queue, with the exchange the person saw. */
export async function expectExtraction(stack: SurfacesStack, pool: string, user: string): Promise<void> {
  const queue = new Queue(QueueName.Extract, { connection: { url: stack.redis.url } });
  try {
    const jobsOfPool = async () =>
      (await queue.getJobs(['waiting', 'delayed', 'prioritized'])).filter((job) => (job.data as { pool?: string }).pool === pool);
    await eventually(async () => expect((await jobsOfPool()).length).toBeGreaterThan(0), { timeout: 10_000 });
    const [job] = await jobsOfPool();
    expect(job?.name).toBe(JobName.ExtractExchange);
    expect(job?.data).toMatchObject({ pool, suggestions: ['User likes green tea'], exchange: { user, assistant: 'Sure.  Anything else?' } });
  } finally {
    await queue.close();
  }
}
