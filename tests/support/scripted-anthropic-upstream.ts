import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { chunksOf, roughTokens, ScriptedHttpServer, sleep, writeSse, type RecordedRequest } from './scripted-http.js';

/** A content block the scripted model produces. */
export type AnthropicScriptBlock =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool_use'; readonly name: string; readonly input: Record<string, unknown>; readonly id?: string };

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/** What the scripted upstream does with one `POST /v1/messages`. */
export type AnthropicReply =
  | {
      readonly kind: 'message';
      readonly content: readonly AnthropicScriptBlock[];
      /** Default: `tool_use` when a block is a tool_use, else `end_turn`. */
      readonly stopReason?: AnthropicStopReason;
      readonly inputTokens?: number;
      readonly outputTokens?: number;
      /** Pause before each streamed delta (and before a non-streamed answer). */
      readonly delayMs?: number;
    }
  /** An HTTP error with Anthropic's error body. */
  | { readonly kind: 'error'; readonly status: number; readonly errorType: string; readonly message: string }
  /** Streams the given blocks, then an `event: error` in the middle of the message. */
  | {
      readonly kind: 'stream-error';
      readonly content?: readonly AnthropicScriptBlock[];
      readonly errorType: string;
      readonly message: string;
    }
  /** Accepts the request and never answers. */
  | { readonly kind: 'hang' }
  /** Cuts the connection without an answer. */
  | { readonly kind: 'drop' };

export type AnthropicResponder = (request: RecordedRequest) => AnthropicReply;

export const anthropicText = (text: string): AnthropicScriptBlock => ({ type: 'text', text });
export const anthropicToolUse = (name: string, input: Record<string, unknown>, id?: string): AnthropicScriptBlock =>
  id === undefined ? { type: 'tool_use', name, input } : { type: 'tool_use', name, input, id };
/** A whole reply from blocks; a string is a text block. */
export const anthropicMessage = (...content: (AnthropicScriptBlock | string)[]): AnthropicReply => ({
  kind: 'message',
  content: content.map((block) => (typeof block === 'string' ? anthropicText(block) : block)),
});

export interface ScriptedAnthropicOptions {
  /** When set, requests must carry it as `x-api-key` or bearer, else 401 like the real API. */
  readonly apiKey?: string;
  /** Characters per streamed text delta (default 4). */
  readonly chunkSize?: number;
}

const MODEL_FALLBACK = 'claude-sonnet-4-5';

/**
 * An Anthropic Messages API double that streams exactly like api.anthropic.com:
 * `event: <type>` / `data: {...}` with message_start, content_block_start/delta/stop (with a
 * ping after the first block starts), `input_json_delta` partial_json for tool_use,
 * message_delta (stop_reason and usage) and message_stop. Replies are scripted per test, in
 * order; when the queue is empty the responder (if any) decides. Every request is recorded.
 * Serves `POST /v1/messages`, `POST /v1/messages/count_tokens` and `GET /v1/models`.
 */
export class ScriptedAnthropicUpstream {
  private readonly queue: AnthropicReply[] = [];
  private responder: AnthropicResponder | undefined;

  private constructor(
    private readonly http: ScriptedHttpServer,
    private readonly options: ScriptedAnthropicOptions,
  ) {}

  static async start(options: ScriptedAnthropicOptions = {}): Promise<ScriptedAnthropicUpstream> {
    const holder: { upstream?: ScriptedAnthropicUpstream } = {};
    const http = await ScriptedHttpServer.start((request, response) => holder.upstream?.handle(request, response));
    holder.upstream = new ScriptedAnthropicUpstream(http, options);
    return holder.upstream;
  }

  /** Base URL as ANTHROPIC_UPSTREAM_BASE_URL takes it (no /v1). */
  get url(): string {
    return this.http.url;
  }

  /** Every request received, in order. */
  get requests(): readonly RecordedRequest[] {
    return this.http.requests;
  }

  /** Requests to `POST /v1/messages` only. */
  get messageRequests(): readonly RecordedRequest[] {
    return this.http.requests.filter((request) => request.path.split('?')[0] === '/v1/messages');
  }

  /** Queues replies for the next `POST /v1/messages`, in order. */
  reply(...replies: AnthropicReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /** Decides replies once the queue is empty (e.g. answer from what the request contains). */
  respondWith(responder: AnthropicResponder): this {
    this.responder = responder;
    return this;
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private async handle(request: RecordedRequest, response: ServerResponse): Promise<void> {
    const path = request.path.split('?')[0];
    if (request.method === 'GET' && path === '/v1/models') {
      const refusal = this.checkHeaders(request);
      if (refusal) return sendError(response, refusal.status, refusal.errorType, refusal.message);
      const model = { type: 'model', id: MODEL_FALLBACK, display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ data: [model], has_more: false, first_id: model.id, last_id: model.id }));
      return;
    }
    if (request.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
      return sendError(response, 404, 'not_found_error', `${request.method} ${request.path} not found`);
    }
    const refusal = this.checkHeaders(request);
    if (refusal) return sendError(response, refusal.status, refusal.errorType, refusal.message);
    const invalid = conversationProblem(request.body['messages']);
    if (invalid) return sendError(response, 400, 'invalid_request_error', invalid);
    if (path === '/v1/messages/count_tokens') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ input_tokens: roughTokens([request.body['system'], request.body['messages'], request.body['tools']]) }));
      return;
    }
    const reply = this.queue.shift() ?? this.responder?.(request);
    if (!reply) {
      return sendError(response, 500, 'api_error', 'scripted upstream: no reply was scripted for this request');
    }
    const stream = request.body['stream'] === true;
    const model = typeof request.body['model'] === 'string' ? request.body['model'] : MODEL_FALLBACK;
    const inputTokens = roughTokens([request.body['system'], request.body['messages'], request.body['tools']]);
    switch (reply.kind) {
      case 'error':
        return sendError(response, reply.status, reply.errorType, reply.message);
      case 'hang':
        return;
      case 'drop':
        return ScriptedHttpServer.drop(response);
      case 'message': {
        const message = buildMessage(reply, model, inputTokens);
        if (reply.delayMs) await sleep(reply.delayMs);
        if (!stream) {
          response.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId() });
          response.end(JSON.stringify(message));
          return;
        }
        return this.stream(response, message, reply.delayMs ?? 0);
      }
      case 'stream-error': {
        const message = buildMessage({ kind: 'message', content: reply.content ?? [] }, model, inputTokens);
        return this.stream(response, message, 0, { type: reply.errorType, message: reply.message });
      }
    }
  }

  private checkHeaders(request: RecordedRequest): { status: number; errorType: string; message: string } | undefined {
    if (!request.headers['anthropic-version']) {
      return { status: 400, errorType: 'invalid_request_error', message: 'anthropic-version: header is required' };
    }
    if (this.options.apiKey !== undefined) {
      const bearer = request.headers.authorization?.replace(/^Bearer\s+/i, '');
      const key = request.headers['x-api-key'] ?? bearer;
      if (key !== this.options.apiKey) {
        return { status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' };
      }
    }
    return undefined;
  }

  private async stream(
    response: ServerResponse,
    message: AnthropicMessageJson,
    delayMs: number,
    failWith?: { type: string; message: string },
  ): Promise<void> {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': requestId(),
    });
    const pause = () => (delayMs ? sleep(delayMs) : Promise.resolve());
    writeSse(response, 'message_start', {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
    });
    const chunkSize = this.options.chunkSize ?? 4;
    for (const [index, block] of message.content.entries()) {
      if (block.type === 'text') {
        writeSse(response, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
        if (index === 0) writeSse(response, 'ping', { type: 'ping' });
        for (const text of chunksOf(block.text, chunkSize)) {
          await pause();
          writeSse(response, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
        }
      } else {
        writeSse(response, 'content_block_start', {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        if (index === 0) writeSse(response, 'ping', { type: 'ping' });
        // The real API opens every tool input with an empty partial_json, then streams the JSON in pieces.
        for (const partial_json of ['', ...chunksOf(JSON.stringify(block.input), chunkSize * 3)]) {
          await pause();
          writeSse(response, 'content_block_delta', {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json },
          });
        }
      }
      writeSse(response, 'content_block_stop', { type: 'content_block_stop', index });
    }
    if (failWith) {
      writeSse(response, 'error', { type: 'error', error: failWith });
      response.end();
      return;
    }
    writeSse(response, 'message_delta', {
      type: 'message_delta',
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    });
    writeSse(response, 'message_stop', { type: 'message_stop' });
    response.end();
  }
}

type AnthropicBlockJson = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicMessageJson {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicBlockJson[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: null;
  usage: {
    input_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
    output_tokens: number;
    service_tier: 'standard';
  };
}

function buildMessage(reply: Extract<AnthropicReply, { kind: 'message' }>, model: string, inputTokens: number): AnthropicMessageJson {
  const content: AnthropicBlockJson[] = reply.content.map((block) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : { type: 'tool_use', id: block.id ?? `toolu_${randomBytes(12).toString('hex')}`, name: block.name, input: block.input },
  );
  const stopReason = reply.stopReason ?? (content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn');
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: reply.inputTokens ?? inputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: reply.outputTokens ?? roughTokens(content),
      service_tier: 'standard',
    },
  };
}

/**
 * The conversation rules the real API enforces and a proxy running a hidden tool loop can break:
 * every tool_use answered by a tool_result in the very next message, no tool_result without its
 * tool_use, no empty or whitespace-only text block. Returns the API's complaint, or undefined.
 */
function conversationProblem(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return 'messages: Field required';
  type Block = { type?: string; id?: string; tool_use_id?: string; text?: unknown };
  const blocksOf = (message: unknown): Block[] => {
    const content = (message as { content?: unknown }).content;
    return Array.isArray(content) ? (content as Block[]) : [];
  };
  for (const [index, message] of messages.entries()) {
    const blocks = blocksOf(message);
    for (const block of blocks) {
      if (block.type === 'text' && (typeof block.text !== 'string' || block.text.trim() === '')) {
        return `messages.${index}: text content blocks must contain non-whitespace text`;
      }
    }
    const previous = index > 0 ? messages[index - 1] : undefined;
    const offered = new Set(
      (previous && (previous as { role?: string }).role === 'assistant' ? blocksOf(previous) : [])
        .filter((block) => block.type === 'tool_use')
        .map((block) => block.id),
    );
    const answered = blocks.filter((block) => block.type === 'tool_result').map((block) => block.tool_use_id);
    const stray = answered.filter((id) => !offered.has(id));
    if (stray.length > 0) {
      return `messages.${index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
    if (index > 0 && offered.size > 0) {
      const missing = [...offered].filter((id) => !answered.includes(id));
      if (missing.length > 0) {
        return `messages.${index - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
  }
  return undefined;
}

function requestId(): string {
  return `req_${randomBytes(12).toString('hex')}`;
}

function sendError(response: ServerResponse, status: number, errorType: string, message: string): void {
  const id = requestId();
  response.writeHead(status, { 'content-type': 'application/json', 'request-id': id });
  response.end(JSON.stringify({ type: 'error', error: { type: errorType, message }, request_id: id }));
}
