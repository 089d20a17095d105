import { MemoryPattern } from '@engram/contracts';
import { upstreamError } from '../errors.js';
import { MemoryToolExecutor } from '../memory-tool-executor.js';
import { MEMORY_TOOLS } from '../memory-tools.js';
import type { ClientSink, MemoryPort, UpstreamPort } from '../ports.js';
import { runTurn } from '../turn-runner.js';
import type { WireAdapter } from '../wire-adapter.js';

/** Test support for adapter specs: the engine's real loop against scripted upstream replies. */

export const TEST_TIER1 = '<engram-memory>\n- prefers fish shell\n</engram-memory>';

export interface ScriptedReply {
  readonly status?: number;
  readonly body: string;
}

/** Records what the engine writes to the client. */
export class RecordingSink implements ClientSink {
  status = 0;
  body = '';
  started = false;
  ended = false;
  readonly signal = new AbortController().signal;
  respond(status: number, _headers: Readonly<Record<string, string>>, body: string | Uint8Array): void {
    this.status = status;
    this.body = typeof body === 'string' ? body : new TextDecoder().decode(body);
    this.started = true;
  }
  startStream(status: number): void {
    this.status = status;
    this.started = true;
  }
  write(chunk: string | Uint8Array): Promise<void> {
    this.body += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
    return Promise.resolve();
  }
  end(): void {
    this.ended = true;
  }
  abort(): void {
    this.ended = true;
  }
}

/**
 * Runs one turn of `adapter` with Tier 1 and the memory tools added, against `replies` served in
 * order (then a refused connection), and a memory that records its calls and finds "uses fish shell".
 */
export async function runScriptedTurn<R>(adapter: WireAdapter<R>, request: unknown, replies: ScriptedReply[]) {
  const sent: R[] = [];
  const upstream: UpstreamPort = {
    post: (_path, body) => {
      sent.push(JSON.parse(String(body)) as R);
      const reply = replies.shift();
      // As the real upstream port reports it: a 502 EngramHttpError.
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
  const calls: { pattern: string; request: Record<string, unknown> }[] = [];
  const memory = {
    call: (pattern: string, call: Record<string, unknown>) => {
      calls.push({ pattern, request: call });
      const entry = { id: 'm1', content: String(call['content'] ?? 'uses fish shell'), category: 'environment' };
      if (pattern === MemoryPattern.Search) return Promise.resolve([{ entry, score: 1, effectiveConfidence: 0.9 }]);
      return Promise.resolve(entry);
    },
  } as unknown as MemoryPort;
  const sink = new RecordingSink();
  const jobs: unknown[] = [];
  const withMemory = adapter.withMemory(adapter.parseRequest(request), { tier1Block: TEST_TIER1, tools: MEMORY_TOOLS });
  await runTurn(
    adapter,
    withMemory,
    { pool: 'default', requestId: 'r1' },
    {
      upstream,
      tools: new MemoryToolExecutor(memory),
      extraction: { enqueue: (job) => jobs.push(job) },
      maxIterations: 3,
    },
    sink,
  );
  return { sink, sent, calls, jobs };
}
