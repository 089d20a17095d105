import { ClientView } from './client-view.js';
import { EngramHttpError, internalError, upstreamError } from './errors.js';
import { extractionFor } from './extraction.js';
import { MEMORY_LIMIT_MESSAGE } from './memory-tools.js';
import type { MemoryToolExecutor } from './memory-tool-executor.js';
import type { ClientSignal, ClientSink, ExtractionPort, UpstreamPort, UpstreamReply } from './ports.js';
import { isMemoryToolName, type ModelTurn, type ToolCall, type ToolResult, type TurnContext } from './turn.js';
import { readAll } from './read-all.js';
import { sseBatches } from './sse.js';
import type { StreamRewriter, WireAdapter } from './wire-adapter.js';

/** Hooks for metrics; every one optional. */
export interface TurnObserver {
  upstreamLatency?(seconds: number): void;
  memoryRound?(): void;
  error?(kind: 'upstream' | 'upstream_status' | 'client_abort' | 'internal'): void;
  /** A failure that is not the upstream's (a bug): for the log, with its stack. */
  internalError?(error: unknown): void;
}

export interface TurnDeps {
  readonly upstream: UpstreamPort;
  readonly tools: Pick<MemoryToolExecutor, 'run'>;
  readonly extraction: ExtractionPort;
  readonly maxIterations: number;
  readonly observer?: TurnObserver;
}

/**
 * Runs one client request with memory: calls upstream, executes the model's memory calls and
 * calls upstream again (at most `maxIterations` rounds, then one more with the limit message),
 * and writes one ordinary response to the client, streamed or not, with memory hidden.
 * `request` is the adapter's request with memory already added (`withMemory`).
 */
export async function runTurn<R>(adapter: WireAdapter<R>, request: R, context: TurnContext, deps: TurnDeps, sink: ClientSink): Promise<void> {
  // Read when the model calls a memory tool's name, not for each answer that passes unchanged.
  let clientTools: ReadonlySet<string> | undefined;
  const view = new ClientView((name) => isMemoryToolName(name) && !(clientTools ??= adapter.clientToolNames(request)).has(name));
  const rewriter = adapter.isStream(request) ? adapter.createStreamRewriter(view) : null;
  const bodies: unknown[] = [];
  const path = adapter.upstreamPath(request);
  let current = request;
  let memoryRounds = 0;
  let limited = false;

  try {
    for (let round = 0; ; round++) {
      const reply = await callUpstream(deps, path, adapter.serializeRequest(current), sink.signal);
      if (reply.status < 200 || reply.status >= 300) {
        deps.observer?.error?.('upstream_status');
        await relayUpstreamFailure(reply, sink, rewriter);
        return;
      }
      let turn: ModelTurn;
      if (rewriter) {
        if (!sink.started) sink.startStream(reply.status, streamHeaders(reply.headers));
        turn = await pumpRound(reply, rewriter, round, sink);
      } else {
        const bytes = await readAll(reply);
        const text = utf8(bytes);
        if (round === 0 && adapter.passesUnchanged?.(text)) {
          sink.respond(200, { ...reply.headers, 'content-type': 'application/json' }, bytes);
          return;
        }
        const body = parseUpstreamJson(text);
        bodies.push(body);
        turn = adapter.readTurn(body);
        // The text reaches the view once, when renderResponse shows it; the calls are placed now.
        for (const call of turn.toolCalls) view.openCall(call.id, call.name);
      }

      const memoryCalls = turn.toolCalls.filter((call) => view.isHidden(call.name));
      const hasClientCalls = memoryCalls.length < turn.toolCalls.length;
      let finishReason: string | null = null;
      if (memoryCalls.length === 0) {
        finishReason = turn.finishReason === 'tool_calls' && !hasClientCalls ? 'stop' : (turn.finishReason ?? 'stop');
      } else if (hasClientCalls) {
        // A mixed turn: memory calls take effect, the client gets its own calls only.
        const results = await runCalls(deps, memoryCalls, context);
        adapter.settleMemoryCalls?.({ text: turn.text, calls: memoryCalls, results, raw: turn.raw });
        finishReason = 'tool_calls';
      } else if (limited) {
        finishReason = 'stop';
      }
      if (finishReason !== null) {
        await finish(adapter, bodies, view, rewriter, sink, finishReason, reply.headers);
        const job = extractionFor(view, context, adapter.lastUserText(request));
        if (job) deps.extraction.enqueue(job);
        return;
      }

      let results: ToolResult[];
      if (memoryRounds < deps.maxIterations) {
        results = await runCalls(deps, memoryCalls, context);
        memoryRounds++;
        deps.observer?.memoryRound?.();
      } else {
        results = memoryCalls.map((call) => ({ callId: call.id, name: call.name, content: MEMORY_LIMIT_MESSAGE }));
        limited = true;
      }
      current = adapter.withMemoryRound(current, { text: turn.text, calls: memoryCalls, results, raw: turn.raw });
    }
  } catch (error) {
    if (sink.signal.aborted) {
      deps.observer?.error?.('client_abort');
      return;
    }
    // The upstream port reports its failures as EngramHttpErrors (502/504); anything else is Engram's own.
    const failure = error instanceof EngramHttpError ? error : internalError();
    deps.observer?.error?.(error instanceof EngramHttpError ? 'upstream' : 'internal');
    if (!(error instanceof EngramHttpError)) deps.observer?.internalError?.(error);
    if (!sink.started) {
      sink.respond(failure.status, JSON_HEADERS, JSON.stringify(adapter.errorBody(failure)));
    } else {
      await sink.write(rewriter ? rewriter.fail(failure.status, failure.message) : '');
      sink.end();
    }
  }
}

async function callUpstream(deps: TurnDeps, path: string, body: string, signal: ClientSignal): Promise<UpstreamReply> {
  const started = performance.now();
  const reply = await deps.upstream.post(path, body, signal);
  deps.observer?.upstreamLatency?.((performance.now() - started) / 1000);
  return reply;
}

async function runCalls(deps: TurnDeps, calls: readonly ToolCall[], context: TurnContext): Promise<ToolResult[]> {
  const results: ToolResult[] = [];
  // In order: a store followed by a search in one round must see the stored entry.
  for (const call of calls) results.push(await deps.tools.run(call, context));
  return results;
}

/** Feeds one round's SSE stream through the rewriter, writing as it goes, and returns the round's turn. */
async function pumpRound(reply: UpstreamReply, rewriter: StreamRewriter, round: number, sink: ClientSink): Promise<ModelTurn> {
  rewriter.beginRound(round);
  for await (const messages of sseBatches(reply.body)) {
    let out = '';
    for (const message of messages) out += rewriter.push(message);
    if (out !== '') await sink.write(out);
  }
  return rewriter.endRound();
}

async function finish<R>(
  adapter: WireAdapter<R>,
  bodies: readonly unknown[],
  view: ClientView,
  rewriter: StreamRewriter | null,
  sink: ClientSink,
  finishReason: string,
  headers: Readonly<Record<string, string>>,
): Promise<void> {
  if (rewriter) {
    await sink.write(rewriter.finish(finishReason));
    sink.end();
    return;
  }
  const body = adapter.renderResponse(bodies, view, finishReason);
  sink.respond(200, { ...headers, 'content-type': 'application/json' }, JSON.stringify(body));
}

/** A non-2xx upstream answer: its status and body reach the client as they are, when nothing was sent yet. */
async function relayUpstreamFailure(reply: UpstreamReply, sink: ClientSink, rewriter: StreamRewriter | null): Promise<void> {
  const body = await readAll(reply);
  if (!sink.started) {
    sink.respond(reply.status, reply.headers, body);
    return;
  }
  const text = Buffer.from(body).toString('utf8');
  await sink.write(rewriter ? rewriter.fail(reply.status, text) : '');
  sink.end();
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

function parseUpstreamJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw upstreamError(502, 'upstream answered with a body that is not JSON');
  }
}

function streamHeaders(upstream: Readonly<Record<string, string>>): Record<string, string> {
  return { ...upstream, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' };
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
