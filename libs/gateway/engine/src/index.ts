/**
 * @engram/gateway-engine — the memory engine, written once for every wire format.
 *
 * - `turn.ts`: the wire-independent turn (ModelTurn, ToolCall, ToolResult, MemoryRound).
 * - `wire-adapter.ts`: what a format must implement (read its doc comment to write one), with the
 *   pieces every format shares: `sse.ts` (reading and framing server-sent events), `usage.ts`
 *   (usage summed over rounds), `memory-tool-objects.ts` (the memory tools in the format's shape,
 *   told apart from the client's), `errors.ts` (`openAiErrorBody`, the default error body).
 * - `turn-runner.ts`: `runTurn(adapter, adapter.withMemory(request, ...), context, deps, sink)`, the tool
 *   loop (so `clientToolNames` must leave out the tool objects `withMemory` appended).
 * - `relay.ts`: verbatim pass-through (memory off or unavailable, endpoints Engram does not own).
 * - `memory-tools.ts` / `memory-tool-executor.ts`: the six tools and their execution.
 * - `gateway-tier1-cache.ts`, `marker-stripper.ts`, `client-view.ts`, `extraction.ts`.
 * - `api-keys.ts`, `pool-selection.ts`, `errors.ts`: auth, pools and error shape for every surface;
 *   `network-exposure.ts`: whether an open gateway is reachable from the network; `browser-guard.ts`: the
 *   browser requests an open gateway refuses (another Host, another site's page).
 * - `mcp/`: the same tools and the pool's memory as an MCP server.
 * - `openai-chat/`: the reference adapter.
 */
export * from './turn.js';
export * from './wire-adapter.js';
export * from './sse.js';
export * from './usage.js';
export * from './memory-tool-objects.js';
export * from './ports.js';
export * from './errors.js';
export * from './api-keys.js';
export * from './network-exposure.js';
export * from './metrics-access.js';
export * from './pool-selection.js';
export * from './marker-stripper.js';
export * from './client-view.js';
export * from './memory-tools.js';
export * from './prompt-tokens.js';
export * from './memory-tool-executor.js';
export * from './gateway-tier1-cache.js';
export * from './extraction.js';
export * from './turn-runner.js';
export * from './relay.js';
export * from './json-body.js';
export * from './passthrough-path.js';
export * from './mcp/memory-mcp-server.js';
export * from './mcp/mcp-origin.js';
export * from './browser-guard.js';
export * from './openai-chat/chat-types.js';
export * from './openai-chat/chat-adapter.js';
export * from './openai-chat/chat-stream-rewriter.js';
export * from './anthropic-messages/anthropic-types.js';
export * from './anthropic-messages/anthropic-adapter.js';
export * from './anthropic-messages/anthropic-errors.js';
export * from './openai-responses/responses-types.js';
export * from './openai-responses/responses-adapter.js';
