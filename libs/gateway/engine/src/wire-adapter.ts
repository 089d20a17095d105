import type { ClientView } from './client-view.js';
import type { EngramHttpError } from './errors.js';
import type { SseMessage } from './sse.js';
import type { MemoryRound, MemoryToolDefinition, ModelTurn } from './turn.js';

/**
 * How one wire format plugs into the engine. Write one per format, as plain functions over
 * the parsed JSON bodies; the engine does the rest (Tier 1, the tool loop, executing memory
 * tools, marker stripping, extraction hand-off, hiding memory from the client).
 *
 * Writing an adapter (see `openai-chat/` for the reference one):
 * 1. `parseRequest` validates only what the engine needs and keeps every other field as is
 *    (unknown fields pass through untouched). Throw `clientError(400, ...)` for bodies you cannot use.
 * 2. `withMemory` returns a copy of the request with the Tier 1 block appended to the system
 *    prompt (create one when the client sent none; keep the client's own text first and intact)
 *    and the memory tools appended AFTER the client's tools, in the order given, rendered by a
 *    `MemoryToolObjects` (which also answers `clientToolNames`). Byte-identical input must give
 *    byte-identical output (prompt caching).
 * 3. `withMemoryRound` appends the assistant message carrying the round's text and memory calls,
 *    then the tool results, in the format's own way (tool messages, tool_result blocks,
 *    function_call_output items).
 * 4. Non-stream: `readTurn` turns an upstream JSON body into a `ModelTurn`; `renderResponse`
 *    builds the client's body from the rounds' upstream bodies. It feeds the view every text of
 *    every round in order and shows what the view gives back (`view.showText(part)` per text
 *    block, or `pushText`/`flushText` then `view.visibleText()` for one running text): the view is
 *    the one place markers are stripped, and what it saw is what extraction gets. It keeps only
 *    the calls for which `view.isClientCall(id)` holds, has `finishReason` as the stop reason
 *    (mapped back to the format) and usage summed over rounds (`sumUsage`).
 * 5. Stream: `createStreamRewriter` returns an object fed every upstream SSE message of every round.
 *    It returns the SSE text to write to the client now ('' to hold back or drop; frames from
 *    `sse.ts`): text deltas go through `view.pushText` (strips markers, split-safe), a tool call's
 *    first delta goes through `view.openCall(id, name)`, which says whether it is hidden and its
 *    client-visible index; hidden
 *    calls' deltas are dropped, visible ones renumbered. Closing frames (finish reason, usage,
 *    [DONE] / message_stop / response.completed) are held until `finish`, so a continuation
 *    round streams on in the same response; ids/sequence numbers stay consistent across rounds.
 * 6. Formats that must send a round back whole (thinking blocks, reasoning items) put it in
 *    `ModelTurn.raw` (from `readTurn` / `endRound`) and get it back as `MemoryRound.raw`.
 * 7. `errorBody` shapes Engram's own errors in the format; OpenAI-shaped formats use `openAiErrorBody`.
 */
export interface WireAdapter<TRequest> {
  /** Path under the upstream base URL, e.g. '/chat/completions'. */
  upstreamPath(request: TRequest): string;
  parseRequest(body: unknown): TRequest;
  isStream(request: TRequest): boolean;
  /** False when the engine must not touch this request (e.g. n > 1): it is proxied as is. */
  supportsMemory(request: TRequest): boolean;
  /** Text of the last user message, for the extraction job. */
  lastUserText(request: TRequest): string;
  /** Names of the client's own tools (a client tool never becomes a memory tool). */
  clientToolNames(request: TRequest): ReadonlySet<string>;
  withMemory(request: TRequest, memory: { readonly tier1Block: string; readonly tools: readonly MemoryToolDefinition[] }): TRequest;
  withMemoryRound(request: TRequest, round: MemoryRound): TRequest;
  serializeRequest(request: TRequest): string;

  readTurn(body: unknown): ModelTurn;
  renderResponse(bodies: readonly unknown[], view: ClientView, finishReason: string): unknown;

  createStreamRewriter(view: ClientView): StreamRewriter;

  /**
   * A mixed round ended the loop: its memory calls ran, but their results never reached the
   * upstream. Formats whose upstream keeps the conversation (Responses' `previous_response_id`)
   * keep them here and send them with the client's next request, or the upstream finds calls
   * without outputs. Formats whose clients send the whole history need nothing.
   */
  settleMemoryCalls?(round: MemoryRound): void;

  /**
   * Optional fast path for non-streamed answers: true when the upstream's first body (as text)
   * has nothing the engine must act on (no tool calls, no markers), so it goes to the client byte
   * for byte, unparsed. A cheap, conservative text check; false sends it through `readTurn`.
   */
  passesUnchanged?(body: string): boolean;

  /** The body of an error answered before anything was streamed (OpenAI's formats: `openAiErrorBody`). */
  errorBody(error: EngramHttpError): unknown;
}

/** Rewrites one client response's stream across all rounds of the loop. */
export interface StreamRewriter {
  /** Called before the first message of each round (0, 1, ...). */
  beginRound(round: number): void;
  /** One upstream SSE message; returns the SSE text for the client now ('' for nothing). */
  push(message: SseMessage): string;
  /** The round's model turn, assembled from the deltas (all calls, hidden ones included). */
  endRound(): ModelTurn;
  /** The held closing frames with the final stop reason and summed usage; '' text is flushed first. */
  finish(finishReason: string): string;
  /** A terminal error frame in the format's stream error shape. */
  fail(status: number, message: string): string;
}
