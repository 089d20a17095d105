import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { chunksOf, roughTokens, ScriptedHttpServer, sleep, writeSse, type RecordedRequest } from './scripted-http.js';

/** An output item the scripted model produces. */
export type ResponsesScriptItem =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'function_call'; readonly name: string; readonly arguments: Record<string, unknown> | string; readonly callId?: string };

/** What the scripted upstream does with one `POST /v1/responses`. */
export type ResponsesReply =
  | {
      readonly kind: 'response';
      readonly output: readonly ResponsesScriptItem[];
      readonly inputTokens?: number;
      readonly outputTokens?: number;
      /** Pause before each streamed delta (and before a non-streamed answer). */
      readonly delayMs?: number;
    }
  /** An HTTP error with OpenAI's error body. */
  | {
      readonly kind: 'error';
      readonly status: number;
      readonly errorType: string;
      readonly message: string;
      readonly code?: string | null;
      readonly param?: string | null;
    }
  /** Streams the given items, then `response.failed` (what a server error mid-stream looks like). */
  | {
      readonly kind: 'stream-error';
      readonly output?: readonly (ResponsesScriptItem | string)[];
      readonly code: string;
      readonly message: string;
    }
  /** Accepts the request and never answers. */
  | { readonly kind: 'hang' }
  /** Cuts the connection without an answer. */
  | { readonly kind: 'drop' };

/** One input or output item as JSON (messages, function_call, function_call_output, ...). */
export type ResponsesItemJson = Record<string, unknown> & { type?: string };

export type ResponsesResponder = (request: RecordedRequest, conversation: readonly ResponsesItemJson[]) => ResponsesReply;

export const responsesText = (text: string): ResponsesScriptItem => ({ type: 'text', text });
export const responsesCall = (name: string, args: Record<string, unknown> | string, callId?: string): ResponsesScriptItem =>
  callId === undefined ? { type: 'function_call', name, arguments: args } : { type: 'function_call', name, arguments: args, callId };
/** A whole reply from items; a string is an assistant message. */
export const responsesOutput = (...output: (ResponsesScriptItem | string)[]): ResponsesReply => ({
  kind: 'response',
  output: output.map((item) => (typeof item === 'string' ? responsesText(item) : item)),
});

export interface ScriptedResponsesOptions {
  /** When set, requests must carry `Authorization: Bearer <key>`, else 401 like the real API. */
  readonly apiKey?: string;
  /** Characters per streamed text delta (default 4). */
  readonly chunkSize?: number;
}

interface StoredResponse {
  readonly conversation: readonly ResponsesItemJson[];
}

/**
 * An OpenAI Responses API double that streams exactly like api.openai.com: `event:`/`data:`
 * with response.created, response.in_progress, response.output_item.added,
 * response.content_part.added, response.output_text.delta/done, response.content_part.done,
 * response.function_call_arguments.delta/done, response.output_item.done and
 * response.completed, every event with a monotonic `sequence_number`.
 *
 * Like the real API it stores responses (unless `store: false`) and resolves
 * `previous_response_id` into the conversation, and it rejects a conversation in which a
 * function_call has no function_call_output or an output has no call — exactly the mistakes a
 * proxy running a hidden tool loop can make. Replies are scripted per test, in order; when the
 * queue is empty the responder (if any) decides. Every request is recorded.
 */
export class ScriptedResponsesUpstream {
  private readonly queue: ResponsesReply[] = [];
  private responder: ResponsesResponder | undefined;
  private readonly stored = new Map<string, StoredResponse>();
  /** The full conversation (previous responses resolved) of each `POST /v1/responses`, in order. */
  readonly conversations: ResponsesItemJson[][] = [];

  private constructor(
    private readonly http: ScriptedHttpServer,
    private readonly options: ScriptedResponsesOptions,
  ) {}

  static async start(options: ScriptedResponsesOptions = {}): Promise<ScriptedResponsesUpstream> {
    const holder: { upstream?: ScriptedResponsesUpstream } = {};
    const http = await ScriptedHttpServer.start((request, response) => holder.upstream?.handle(request, response));
    holder.upstream = new ScriptedResponsesUpstream(http, options);
    return holder.upstream;
  }

  /** Base URL as UPSTREAM_BASE_URL takes it (with /v1). */
  get url(): string {
    return `${this.http.url}/v1`;
  }

  get requests(): readonly RecordedRequest[] {
    return this.http.requests;
  }

  /** Requests to `POST /v1/responses` only. */
  get responseRequests(): readonly RecordedRequest[] {
    return this.http.requests.filter((request) => request.path.split('?')[0] === '/v1/responses');
  }

  reply(...replies: ResponsesReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  respondWith(responder: ResponsesResponder): this {
    this.responder = responder;
    return this;
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private async handle(request: RecordedRequest, response: ServerResponse): Promise<void> {
    if (request.method !== 'POST' || request.path.split('?')[0] !== '/v1/responses') {
      return sendError(response, 404, { message: `Invalid URL (${request.method} ${request.path})`, type: 'invalid_request_error' });
    }
    if (this.options.apiKey !== undefined && request.headers.authorization !== `Bearer ${this.options.apiKey}`) {
      return sendError(response, 401, {
        message: 'Incorrect API key provided.',
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      });
    }
    const resolved = this.resolveConversation(request.body);
    if ('error' in resolved) return sendError(response, 400, resolved.error);
    const conversation = resolved.conversation;
    this.conversations.push([...conversation]);

    const reply = this.queue.shift() ?? this.responder?.(request, conversation);
    if (!reply) {
      return sendError(response, 500, { message: 'scripted upstream: no reply was scripted for this request', type: 'server_error' });
    }
    const stream = request.body['stream'] === true;
    switch (reply.kind) {
      case 'error':
        return sendError(response, reply.status, {
          message: reply.message,
          type: reply.errorType,
          code: reply.code ?? null,
          param: reply.param ?? null,
        });
      case 'hang':
        return;
      case 'drop':
        return ScriptedHttpServer.drop(response);
      case 'response': {
        const body = buildResponse(request.body, reply, roughTokens(conversation));
        if (request.body['store'] !== false) {
          this.stored.set(body.id, { conversation: [...conversation, ...body.output] });
        }
        if (reply.delayMs) await sleep(reply.delayMs);
        if (!stream) {
          response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId() });
          response.end(JSON.stringify(body));
          return;
        }
        return this.stream(response, body, reply.delayMs ?? 0);
      }
      case 'stream-error': {
        const output = (reply.output ?? []).map((item) => (typeof item === 'string' ? responsesText(item) : item));
        const body = buildResponse(request.body, { kind: 'response', output }, roughTokens(conversation));
        return this.stream(response, body, 0, { code: reply.code, message: reply.message });
      }
    }
  }

  private resolveConversation(body: Record<string, unknown>): { conversation: ResponsesItemJson[] } | { error: ErrorFields } {
    const previousId = body['previous_response_id'];
    let conversation: ResponsesItemJson[] = [];
    if (typeof previousId === 'string') {
      const previous = this.stored.get(previousId);
      if (!previous) {
        return {
          error: {
            message: `Previous response with id '${previousId}' not found.`,
            type: 'invalid_request_error',
            param: 'previous_response_id',
            code: 'previous_response_not_found',
          },
        };
      }
      conversation = [...previous.conversation];
    }
    const input = body['input'];
    if (typeof input === 'string') conversation.push({ type: 'message', role: 'user', content: input });
    else if (Array.isArray(input)) conversation.push(...(input as ResponsesItemJson[]));

    const calls = new Set<string>();
    const answered = new Set<string>();
    for (const item of conversation) {
      if (item.type === 'function_call') calls.add(String(item['call_id']));
      if (item.type === 'function_call_output') {
        const callId = String(item['call_id']);
        if (!calls.has(callId)) {
          return {
            error: {
              message: `No tool call found for function call output with call_id ${callId}.`,
              type: 'invalid_request_error',
              param: 'input',
            },
          };
        }
        answered.add(callId);
      }
    }
    for (const callId of calls) {
      if (!answered.has(callId)) {
        return {
          error: { message: `No tool output found for function call ${callId}.`, type: 'invalid_request_error', param: 'input' },
        };
      }
    }
    return { conversation };
  }

  private async stream(response: ServerResponse, body: ResponseJson, delayMs: number, failWith?: { code: string; message: string }): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'x-request-id': requestId() });
    let sequence = 0;
    const emit = (type: string, fields: Record<string, unknown>) => writeSse(response, type, { type, sequence_number: sequence++, ...fields });
    const pause = () => (delayMs ? sleep(delayMs) : Promise.resolve());
    const chunkSize = this.options.chunkSize ?? 4;

    const pending = { ...body, status: 'in_progress', output: [], usage: null };
    emit('response.created', { response: pending });
    emit('response.in_progress', { response: pending });
    for (const [output_index, item] of body.output.entries()) {
      if (item.type === 'message') {
        const text = item.content[0]?.text ?? '';
        const item_id = item.id;
        emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
        emit('response.content_part.added', {
          item_id,
          output_index,
          content_index: 0,
          part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
        });
        for (const delta of chunksOf(text, chunkSize)) {
          await pause();
          emit('response.output_text.delta', { item_id, output_index, content_index: 0, delta, logprobs: [] });
        }
        emit('response.output_text.done', { item_id, output_index, content_index: 0, text, logprobs: [] });
        emit('response.content_part.done', {
          item_id,
          output_index,
          content_index: 0,
          part: { type: 'output_text', annotations: [], logprobs: [], text },
        });
      } else {
        const item_id = item.id;
        emit('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
        for (const delta of chunksOf(item.arguments, chunkSize * 3)) {
          await pause();
          emit('response.function_call_arguments.delta', { item_id, output_index, delta });
        }
        emit('response.function_call_arguments.done', { item_id, output_index, name: item.name, arguments: item.arguments });
      }
      emit('response.output_item.done', { output_index, item });
    }
    if (failWith) {
      emit('response.failed', {
        response: { ...body, status: 'failed', error: failWith, usage: null },
      });
    } else {
      emit('response.completed', { response: body });
    }
    response.end();
  }
}

interface ErrorFields {
  readonly message: string;
  readonly type: string;
  readonly param?: string | null;
  readonly code?: string | null;
}

type OutputItemJson =
  | {
      id: string;
      type: 'message';
      status: 'completed';
      role: 'assistant';
      content: { type: 'output_text'; annotations: []; logprobs: []; text: string }[];
    }
  | { id: string; type: 'function_call'; status: 'completed'; arguments: string; call_id: string; name: string };

export interface ResponseJson {
  id: string;
  object: 'response';
  created_at: number;
  status: string;
  output: OutputItemJson[];
  usage: {
    input_tokens: number;
    input_tokens_details: { cached_tokens: number };
    output_tokens: number;
    output_tokens_details: { reasoning_tokens: number };
    total_tokens: number;
  } | null;
  [field: string]: unknown;
}

function buildResponse(request: Record<string, unknown>, reply: Extract<ResponsesReply, { kind: 'response' }>, inputTokens: number): ResponseJson {
  const output: OutputItemJson[] = reply.output.map((item) =>
    item.type === 'text'
      ? {
          id: `msg_${hex()}`,
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', annotations: [], logprobs: [], text: item.text }],
        }
      : {
          id: `fc_${hex()}`,
          type: 'function_call',
          status: 'completed',
          arguments: typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments),
          call_id: item.callId ?? `call_${hex()}`,
          name: item.name,
        },
  );
  const input_tokens = reply.inputTokens ?? inputTokens;
  const output_tokens = reply.outputTokens ?? roughTokens(output);
  return {
    id: `resp_${hex()}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    background: false,
    error: null,
    incomplete_details: null,
    instructions: request['instructions'] ?? null,
    max_output_tokens: request['max_output_tokens'] ?? null,
    model: typeof request['model'] === 'string' ? request['model'] : 'gpt-4.1',
    output,
    parallel_tool_calls: true,
    previous_response_id: request['previous_response_id'] ?? null,
    reasoning: { effort: null, summary: null },
    store: request['store'] !== false,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: request['tool_choice'] ?? 'auto',
    tools: request['tools'] ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input_tokens + output_tokens,
    },
    user: null,
    metadata: {},
  };
}

function hex(): string {
  return randomBytes(12).toString('hex');
}

function requestId(): string {
  return `req_${hex()}`;
}

function sendError(response: ServerResponse, status: number, error: ErrorFields): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId() });
  response.end(JSON.stringify({ error: { message: error.message, type: error.type, param: error.param ?? null, code: error.code ?? null } }));
}
