import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { chunksOf, roughTokens, ScriptedHttpServer, sleep, type RecordedRequest, type ScriptedServerOptions } from './scripted-http.js';

/** One tool call the scripted model makes; arguments as an object (serialised) or raw text (possibly malformed). */
export interface ScriptToolCall {
  readonly name: string;
  readonly arguments: Record<string, unknown> | string;
  readonly id?: string;
}

/** What the scripted upstream does with one `POST /v1/chat/completions`. */
export type ChatReply =
  | {
      readonly kind: 'answer';
      /** Assistant text (streamed in `chunkSize` pieces), before any tool calls. */
      readonly text?: string;
      readonly toolCalls?: readonly ScriptToolCall[];
      /** Default: `tool_calls` when there are calls, else `stop`. */
      readonly finishReason?: string;
      /** Overrides the upstream's chunk size for this answer's text. */
      readonly chunks?: readonly string[];
      /** Pause before each streamed chunk (and before a non-streamed answer). */
      readonly delayMs?: number;
      /** Streams this many content chunks, then hangs without ending the response. */
      readonly stallAfterChunks?: number;
    }
  /** An HTTP error with OpenAI's error body. */
  | { readonly kind: 'error'; readonly status: number; readonly message: string; readonly type?: string; readonly code?: string | null }
  /** Accepts the request and never answers. */
  | { readonly kind: 'hang' }
  /** Cuts the connection without an answer. */
  | { readonly kind: 'drop' };

export type ChatResponder = (request: RecordedRequest, index: number) => ChatReply;

export const say = (text: string, extra: Partial<Extract<ChatReply, { kind: 'answer' }>> = {}): ChatReply => ({ kind: 'answer', text, ...extra });
export const callTools = (...toolCalls: ScriptToolCall[]): ChatReply => ({ kind: 'answer', toolCalls });

export interface ScriptedOpenAiOptions extends ScriptedServerOptions {
  /** Characters per streamed content delta (default 4). */
  readonly chunkSize?: number;
  /** Characters per streamed tool-argument fragment (default 7). */
  readonly argumentChunkSize?: number;
}

/**
 * An OpenAI-compatible upstream that streams exactly like api.openai.com's Chat Completions:
 * a role delta first (`content: ""`, or `null` before tool calls), content deltas, tool-call
 * deltas (index, id, type and name first with empty arguments, then argument fragments), a
 * chunk with `finish_reason` and an empty delta, a `choices: []` usage chunk when
 * `stream_options.include_usage` (every other chunk then carries `"usage": null`), and
 * `data: [DONE]`. Non-streamed answers are `chat.completion` objects. It records every request,
 * and every request whose client went away before the answer was complete (`aborted`).
 */
export class ScriptedOpenAiUpstream {
  /** Requests that the gateway cancelled (socket closed before the response finished). */
  readonly aborted: RecordedRequest[] = [];
  private readonly abortWaiters: (() => void)[] = [];
  private chatIndex = 0;

  private constructor(
    private readonly http: ScriptedHttpServer,
    private readonly responder: ChatResponder,
    private readonly options: ScriptedOpenAiOptions,
  ) {}

  static async start(responder: ChatResponder | readonly ChatReply[], options: ScriptedOpenAiOptions = {}): Promise<ScriptedOpenAiUpstream> {
    const script = typeof responder === 'function' ? responder : sequence(responder);
    const holder: { instance?: ScriptedOpenAiUpstream } = {};
    const http = await ScriptedHttpServer.start((request, response) => holder.instance?.handle(request, response), options);
    holder.instance = new ScriptedOpenAiUpstream(http, script, options);
    return holder.instance;
  }

  /** Base URL to configure as UPSTREAM_BASE_URL (ends in /v1). */
  get baseUrl(): string {
    return `${this.http.url}/v1`;
  }

  get requests(): readonly RecordedRequest[] {
    return this.http.requests;
  }

  /** The chat completion requests, in arrival order. */
  get chatRequests(): RecordedRequest<ChatRequestJson>[] {
    return this.http.requests.filter((request) => request.path.endsWith('/chat/completions')) as RecordedRequest<ChatRequestJson>[];
  }

  /** Resolves once some request has been aborted by its client. */
  whenAborted(): Promise<void> {
    if (this.aborted.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.abortWaiters.push(resolve));
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private async handle(request: RecordedRequest, response: ServerResponse): Promise<void> {
    response.once('close', () => {
      if (!response.writableFinished) {
        this.aborted.push(request);
        for (const wake of this.abortWaiters.splice(0)) wake();
      }
    });
    if (request.method === 'GET' && request.path.endsWith('/models')) {
      json(response, 200, { object: 'list', data: [{ id: 'gpt-scripted', object: 'model', created: 1_700_000_000, owned_by: 'engram-tests' }] });
      return;
    }
    if (request.method === 'POST' && request.path.endsWith('/embeddings')) {
      json(response, 200, embeddingsFor(request.body));
      return;
    }
    if (request.method !== 'POST' || !request.path.endsWith('/chat/completions')) {
      json(response, 404, {
        error: { message: `Unknown request URL: ${request.method} ${request.path}`, type: 'invalid_request_error', param: null, code: 'unknown_url' },
      });
      return;
    }
    const reply = this.responder(request, this.chatIndex++);
    switch (reply.kind) {
      case 'error':
        json(response, reply.status, {
          error: { message: reply.message, type: reply.type ?? 'server_error', param: null, code: reply.code ?? null },
        });
        return;
      case 'hang':
        return;
      case 'drop':
        ScriptedHttpServer.drop(response);
        return;
      case 'answer':
        if (request.body['stream'] === true) await this.stream(request, reply, response);
        else await this.complete(request, reply, response);
    }
  }

  private async complete(request: RecordedRequest, reply: Extract<ChatReply, { kind: 'answer' }>, response: ServerResponse): Promise<void> {
    const body = request.body as unknown as ChatRequestJson;
    if (reply.delayMs) await sleep(reply.delayMs);
    const calls = (reply.toolCalls ?? []).map(withId);
    const text = reply.chunks ? reply.chunks.join('') : (reply.text ?? '');
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: text === '' && calls.length > 0 ? null : text,
      refusal: null,
      annotations: [],
    };
    if (calls.length > 0) {
      message['tool_calls'] = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: argumentsText(call) } }));
    }
    json(response, 200, {
      id: completionId(),
      object: 'chat.completion',
      created: nowSeconds(),
      model: String(body.model ?? 'gpt-scripted'),
      choices: [{ index: 0, message, logprobs: null, finish_reason: reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop') }],
      usage: usageFor(request, text, calls),
      service_tier: 'default',
      system_fingerprint: 'fp_scripted',
    });
  }

  private async stream(request: RecordedRequest, reply: Extract<ChatReply, { kind: 'answer' }>, response: ServerResponse): Promise<void> {
    const body = request.body as unknown as ChatRequestJson;
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': `req_${randomBytes(6).toString('hex')}`,
    });
    const includeUsage = body.stream_options?.include_usage === true;
    const base = {
      id: completionId(),
      object: 'chat.completion.chunk',
      created: nowSeconds(),
      model: String(body.model ?? 'gpt-scripted'),
      service_tier: 'default',
      system_fingerprint: 'fp_scripted',
    };
    const send = async (choice: Record<string, unknown> | null, usage?: unknown): Promise<boolean> => {
      if (response.destroyed) return false;
      if (reply.delayMs) await sleep(reply.delayMs);
      const chunk = { ...base, choices: choice ? [{ index: 0, ...choice, logprobs: null }] : [], ...(includeUsage ? { usage: usage ?? null } : {}) };
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      return !response.destroyed;
    };
    const calls = (reply.toolCalls ?? []).map(withId);
    const pieces = reply.chunks ?? chunksOf(reply.text ?? '', this.options.chunkSize ?? 4);
    const text = pieces.join('');
    const startsWithCalls = pieces.length === 0 && calls.length > 0;
    if (!(await send({ delta: { role: 'assistant', content: startsWithCalls ? null : '', refusal: null }, finish_reason: null }))) return;
    let sent = 0;
    for (const piece of pieces) {
      if (reply.stallAfterChunks !== undefined && sent >= reply.stallAfterChunks) return; // hang mid-stream
      if (!(await send({ delta: { content: piece }, finish_reason: null }))) return;
      sent++;
    }
    for (const [index, call] of calls.entries()) {
      if (
        !(await send({
          delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
          finish_reason: null,
        }))
      )
        return;
      for (const fragment of chunksOf(argumentsText(call), this.options.argumentChunkSize ?? 7)) {
        if (!(await send({ delta: { tool_calls: [{ index, function: { arguments: fragment } }] }, finish_reason: null }))) return;
      }
    }
    if (!(await send({ delta: {}, finish_reason: reply.finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop') }))) return;
    if (includeUsage && !(await send(null, usageFor(request, text, calls)))) return;
    response.end('data: [DONE]\n\n');
  }
}

export interface ChatRequestJson {
  model?: string;
  messages: {
    role: string;
    content?: unknown;
    tool_calls?: { id: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [field: string]: unknown;
}

function sequence(replies: readonly ChatReply[]): ChatResponder {
  return (_request, index) => replies[Math.min(index, replies.length - 1)] ?? { kind: 'answer', text: '' };
}

function withId(call: ScriptToolCall): ScriptToolCall & { id: string } {
  return { ...call, id: call.id ?? `call_${randomBytes(9).toString('base64url')}` };
}

function argumentsText(call: ScriptToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function usageFor(request: RecordedRequest, text: string, calls: readonly ScriptToolCall[]): Record<string, unknown> {
  const prompt = Math.max(1, Math.ceil(request.bodyBytes / 4));
  const completion = roughTokens(text) + calls.reduce((sum, call) => sum + roughTokens(argumentsText(call)), 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

/** A float embedding per input, three numbers derived from its length (the SDK's default base64 is not offered). */
function embeddingsFor(body: Record<string, unknown>): Record<string, unknown> {
  const inputs = Array.isArray(body['input']) ? body['input'] : [body['input']];
  return {
    object: 'list',
    data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: [String(input).length, 0.5, -0.5] })),
    model: String(body['model'] ?? 'text-embedding-scripted'),
    usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
  };
}

function json(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    'x-request-id': `req_${randomBytes(6).toString('hex')}`,
  });
  response.end(text);
}

function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('base64url')}`;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
