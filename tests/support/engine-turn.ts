import { MemoryPattern } from '@engram/contracts';
import {
  MEMORY_TOOLS,
  MemoryToolExecutor,
  runTurn,
  upstreamError,
  type MemoryPort,
  type UpstreamPort,
  type UpstreamReply,
  type WireAdapter,
} from '@engram/gateway-engine';
import type { ExtractExchangeData } from '@engram/jobs';
import { RecordingSink } from '../../libs/gateway/engine/src/testing/recording-sink.js';

/**
 * One turn of the gateway engine's loop (`runTurn`) with Tier 1 and the memory tools added, for the
 * adapters' specs: a scripted upstream, the real memory service (memoryInProcess) behind the tools,
 * and what the client was sent and extraction was handed recorded.
 */

export const TEST_TIER1 = '<engram-memory>\n- prefers fish shell\n</engram-memory>';

export interface ScriptedReply {
  readonly status?: number;
  readonly body: string;
}

/** An upstream answering each request with the next reply, then refusing the connection (as the real port reports it). */
export function scriptedReplies<R>(replies: readonly ScriptedReply[]): UpstreamPort & { readonly sent: R[] } {
  const sent: R[] = [];
  const queue = [...replies];
  return {
    sent,
    post: (_path, body): Promise<UpstreamReply> => {
      sent.push(JSON.parse(String(body)) as R);
      const reply = queue.shift();
      if (!reply) return Promise.reject(upstreamError(502, 'the upstream could not be reached: connect ECONNREFUSED'));
      return Promise.resolve({
        status: reply.status ?? 200,
        headers: {},
        body: (async function* () {
          yield new TextEncoder().encode(reply.body);
        })(),
      });
    },
  };
}

export interface EngineTurnOptions {
  readonly upstream: UpstreamPort;
  readonly memory: MemoryPort;
  readonly tier1Block?: string;
  readonly pool?: string;
  readonly requestId?: string;
  readonly maxIterations?: number;
}

/** Parses `request` with the adapter, adds memory, and runs the turn to its end. */
export async function runEngineTurn<R>(adapter: WireAdapter<R>, request: unknown, options: EngineTurnOptions) {
  const sink = new RecordingSink();
  const jobs: ExtractExchangeData[] = [];
  const withMemory = adapter.withMemory(adapter.parseRequest(request), { tier1Block: options.tier1Block ?? TEST_TIER1, tools: MEMORY_TOOLS });
  await runTurn(
    adapter,
    withMemory,
    { pool: options.pool ?? 'default', requestId: options.requestId ?? 'r1' },
    {
      upstream: options.upstream,
      tools: new MemoryToolExecutor(options.memory),
      extraction: { enqueue: (job) => jobs.push(job) },
      maxIterations: options.maxIterations ?? 3,
    },
    sink,
  );
  return { sink, jobs };
}

/** The fact memory holds before a scripted turn, and Tier 1 says: the model's search for "shell" finds it. */
export const TEST_FACT = { id: 'fish-shell', content: 'uses fish shell', category: 'environment' } as const;

/**
 * A turn of `adapter` against `replies` (see scriptedReplies) in pool `default`, memory holding
 * TEST_FACT; `stored` is what the turn's memory calls stored.
 */
export async function scriptedTurn<R>(adapter: WireAdapter<R>, request: unknown, replies: readonly ScriptedReply[], memory: MemoryPort) {
  await memory.call(MemoryPattern.Store, { pool: 'default', actor: 'user', ...TEST_FACT });
  const upstream = scriptedReplies<R>(replies);
  const { sink, jobs } = await runEngineTurn(adapter, request, { upstream, memory });
  const entries = await memory.call(MemoryPattern.List, { pool: 'default' });
  const stored = entries.filter((entry) => entry.id !== TEST_FACT.id).map((entry) => entry.content);
  return { sink, jobs, sent: upstream.sent, stored };
}
