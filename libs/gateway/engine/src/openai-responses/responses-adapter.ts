import type { ClientView } from '../client-view.js';
import { clientError, openAiErrorBody } from '../errors.js';
import { MemoryToolObjects } from '../memory-tool-objects.js';
import { checkOpenAiTools, objectBody, objectParts } from '../request-shape.js';
import type { MemoryRound, MemoryToolDefinition, ModelTurn, ToolCall } from '../turn.js';
import { sumUsage } from '../usage.js';
import type { StreamRewriter, WireAdapter } from '../wire-adapter.js';
import { asInputItems, messageText, toolCallOf, withoutMemoryTools } from './responses-items.js';
import { ResponsesStreamRewriter } from './responses-stream-rewriter.js';
import { PendingMemoryOutputs } from './responses-pending-outputs.js';
import type { ResponsesItem, ResponsesRequest, ResponsesResponse, ResponsesRound } from './responses-types.js';

/**
 * The OpenAI Responses API (`POST /v1/responses`, Codex CLI) on the engine: Tier 1 goes into
 * `instructions`, memory tools are function tools after the client's, and a memory round goes
 * back as the round's output items plus `function_call_output` items appended to `input`, with
 * the client's `previous_response_id` kept as it is, so it works with `store` on or off.
 */
export class OpenAiResponsesAdapter implements WireAdapter<ResponsesRequest> {
  // strict: false, because the Responses API makes function tools strict by default and strict
  // schemas may not have optional properties.
  private readonly memoryTools = new MemoryToolObjects((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  }));

  readonly errorBody = openAiErrorBody;

  constructor(private readonly pending = new PendingMemoryOutputs()) {}

  upstreamPath(): string {
    return '/responses';
  }

  parseRequest(body: unknown): ResponsesRequest {
    const request = objectBody<ResponsesRequest>(body);
    if (request.input !== undefined && typeof request.input !== 'string' && !Array.isArray(request.input)) {
      throw clientError(400, '`input` must be a string or an array of items', 'invalid_input');
    }
    if (Array.isArray(request.input) && !request.input.every((item) => typeof item === 'object' && item !== null)) {
      throw clientError(400, '`input` items must be objects', 'invalid_input');
    }
    checkOpenAiTools(request.tools);
    if (request.instructions !== undefined && request.instructions !== null && typeof request.instructions !== 'string') {
      throw clientError(400, '`instructions` must be a string', 'invalid_instructions');
    }
    return request;
  }

  isStream(request: ResponsesRequest): boolean {
    return request.stream === true;
  }

  supportsMemory(request: ResponsesRequest): boolean {
    // A background response is fetched later by id; there is no turn to run in between.
    return request.background !== true;
  }

  lastUserText(request: ResponsesRequest): string {
    if (typeof request.input === 'string') return request.input;
    const items = request.input ?? [];
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i] as ResponsesItem;
      if (item['role'] === 'user' && (item.type === undefined || item.type === 'message')) {
        const content = item['content'];
        if (typeof content === 'string') return content;
        if (Array.isArray(content)) {
          return objectParts<ResponsesItem>(content)
            .filter((part) => part.type === 'input_text')
            .map((part) => String(part['text'] ?? ''))
            .join('\n');
        }
      }
    }
    return '';
  }

  clientToolNames(request: ResponsesRequest): ReadonlySet<string> {
    return this.memoryTools.clientToolNames(request.tools, (tool) => (tool as { name?: unknown }).name);
  }

  withMemory(request: ResponsesRequest, memory: { readonly tier1Block: string; readonly tools: readonly MemoryToolDefinition[] }): ResponsesRequest {
    const next: ResponsesRequest = { ...request };
    const owed = typeof request.previous_response_id === 'string' ? this.pending.owedTo(request.previous_response_id) : [];
    if (owed.length > 0) next.input = [...owed, ...inputItems(request.input)];
    if (memory.tier1Block !== '') {
      const instructions = request.instructions;
      next.instructions = typeof instructions === 'string' && instructions !== '' ? `${instructions}\n\n${memory.tier1Block}` : memory.tier1Block;
    }
    if (memory.tools.length > 0) next.tools = [...(request.tools ?? []), ...this.memoryTools.render(memory.tools)];
    return next;
  }

  withMemoryRound(request: ResponsesRequest, round: MemoryRound): ResponsesRequest {
    const input = inputItems(request.input);
    const output = isRound(round.raw)
      ? round.raw.items
      : [
          ...(round.text === '' ? [] : [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: round.text }] }]),
          ...round.calls.map((call) => ({ type: 'function_call', call_id: call.id, name: call.name, arguments: call.arguments })),
        ];
    return { ...request, input: [...input, ...asInputItems(output, request.store), ...outputItems(round)] };
  }

  settleMemoryCalls(round: MemoryRound): void {
    if (isRound(round.raw) && round.raw.responseId !== undefined) this.pending.keep(round.raw.responseId, outputItems(round));
  }

  serializeRequest(request: ResponsesRequest): string {
    return JSON.stringify(request);
  }

  readTurn(body: unknown): ModelTurn {
    const response = body as ResponsesResponse;
    const output = Array.isArray(response.output) ? response.output : [];
    const toolCalls = output.map((item) => toolCallOf(item)).filter((call): call is ToolCall => call !== null);
    return {
      text: output.map((item) => (item.type === 'message' ? messageText(item) : '')).join(''),
      toolCalls,
      finishReason: toolCalls.length > 0 ? 'tool_calls' : response.status === 'incomplete' ? 'length' : 'stop',
      raw: { responseId: response.id, items: output } satisfies ResponsesRound,
    };
  }

  renderResponse(bodies: readonly unknown[], view: ClientView): unknown {
    const last = bodies[bodies.length - 1] as ResponsesResponse;
    const output: ResponsesItem[] = [];
    for (const body of bodies as readonly ResponsesResponse[]) {
      for (const item of body.output ?? []) {
        if (item.type === 'function_call') {
          if (view.isClientCall(String(item['call_id']))) output.push(item);
        } else if (item.type === 'message' && Array.isArray(item['content'])) {
          const content = objectParts<ResponsesItem>(item['content']).map((part) =>
            part.type === 'output_text' ? { ...part, text: view.showText(String(part['text'] ?? '')) } : part,
          );
          if (content.some((part) => part.type !== 'output_text' || part['text'] !== '')) output.push({ ...item, content });
        } else {
          output.push(item);
        }
      }
    }
    const usage = sumUsage(bodies as readonly ResponsesResponse[]);
    // The last round's id: it is the one a later `previous_response_id` must name.
    return { ...withoutMemoryTools(last, (name) => view.isHidden(name)), output, ...(usage ? { usage } : {}) };
  }

  createStreamRewriter(view: ClientView): StreamRewriter {
    return new ResponsesStreamRewriter(view);
  }
}

function inputItems(input: ResponsesRequest['input']): ResponsesItem[] {
  return typeof input === 'string' ? [{ role: 'user', content: input }] : [...(input ?? [])];
}

function outputItems(round: MemoryRound): ResponsesItem[] {
  return round.results.map((result) => ({ type: 'function_call_output', call_id: result.callId, output: result.content }));
}

function isRound(raw: unknown): raw is ResponsesRound {
  return typeof raw === 'object' && raw !== null && Array.isArray((raw as ResponsesRound).items);
}
