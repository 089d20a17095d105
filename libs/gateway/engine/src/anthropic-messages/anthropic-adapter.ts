import type { ClientView } from '../client-view.js';
import { clientError, type EngramHttpError } from '../errors.js';
import { MemoryToolObjects } from '../memory-tool-objects.js';
import { firstNonObject } from '../non-object-item.js';
import { objectBody, objectParts } from '../request-shape.js';
import type { MemoryRound, MemoryToolDefinition, ModelTurn } from '../turn.js';
import { sumUsage } from '../usage.js';
import type { StreamRewriter, WireAdapter } from '../wire-adapter.js';
import { anthropicErrorBody } from './anthropic-errors.js';
import { finishReasonOf, stopReasonOf } from './anthropic-stop-reason.js';
import { AnthropicStreamRewriter } from './anthropic-stream-rewriter.js';
import { isBlank } from './anthropic-text.js';
import type { AnthropicBlock, AnthropicMessage, AnthropicRequest, AnthropicResponse } from './anthropic-types.js';

/**
 * Anthropic Messages (`POST /v1/messages`, Claude Code) on the engine: Tier 1 goes into `system`
 * (after the client's blocks, whose `cache_control` stays untouched), memory tools are Anthropic
 * tools after the client's, a memory round is sent back as the assistant's blocks plus
 * `tool_result` blocks, and errors are `{"type":"error","error":{...}}`.
 */
export class AnthropicMessagesAdapter implements WireAdapter<AnthropicRequest> {
  private readonly memoryTools = new MemoryToolObjects((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }));

  upstreamPath(): string {
    return '/v1/messages';
  }

  parseRequest(body: unknown): AnthropicRequest {
    const request = objectBody<AnthropicRequest>(body);
    if (!Array.isArray(request.messages) || !request.messages.every((m) => typeof m === 'object' && m !== null && typeof m.role === 'string')) {
      throw clientError(400, 'messages: must be an array of messages with a role', 'invalid_messages');
    }
    if (request.tools !== undefined && !Array.isArray(request.tools)) {
      throw clientError(400, 'tools: must be an array', 'invalid_tools');
    }
    const badTool = request.tools === undefined ? null : firstNonObject(request.tools);
    if (badTool) {
      throw clientError(400, `tools.${badTool.index}: Input should be a valid dictionary or object to extract fields from`, 'invalid_tools');
    }
    if (request.system !== undefined && typeof request.system !== 'string' && !Array.isArray(request.system)) {
      throw clientError(400, 'system: must be a string or an array of text blocks', 'invalid_system');
    }
    return request;
  }

  isStream(request: AnthropicRequest): boolean {
    return request.stream === true;
  }

  supportsMemory(): boolean {
    return true;
  }

  lastUserText(request: AnthropicRequest): string {
    for (let i = request.messages.length - 1; i >= 0; i--) {
      const message = request.messages[i] as AnthropicMessage;
      if (message.role === 'user') {
        const text = textOf(message.content);
        // A user turn that only answers tool calls is not what the person said.
        if (text !== '') return text;
      }
    }
    return '';
  }

  clientToolNames(request: AnthropicRequest): ReadonlySet<string> {
    return this.memoryTools.clientToolNames(request.tools, (tool) => (tool as { name?: unknown }).name);
  }

  withMemory(request: AnthropicRequest, memory: { readonly tier1Block: string; readonly tools: readonly MemoryToolDefinition[] }): AnthropicRequest {
    const next: AnthropicRequest = { ...request };
    if (memory.tier1Block !== '') next.system = withBlock(request.system, memory.tier1Block);
    if (memory.tools.length > 0) next.tools = [...(request.tools ?? []), ...this.memoryTools.render(memory.tools)];
    return next;
  }

  withMemoryRound(request: AnthropicRequest, round: MemoryRound): AnthropicRequest {
    const content = Array.isArray(round.raw)
      ? (round.raw as AnthropicBlock[]).filter((block) => !(block.type === 'text' && isBlank(block.text)))
      : [
          ...(isBlank(round.text) ? [] : [{ type: 'text', text: round.text }]),
          ...round.calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.name, input: parseInput(call.arguments) })),
        ];
    const results: AnthropicBlock[] = round.results.map((result) => ({ type: 'tool_result', tool_use_id: result.callId, content: result.content }));
    return {
      ...request,
      messages: [...request.messages, { role: 'assistant', content }, { role: 'user', content: results }],
    };
  }

  serializeRequest(request: AnthropicRequest): string {
    return JSON.stringify(request);
  }

  readTurn(body: unknown): ModelTurn {
    const response = body as AnthropicResponse;
    const content = objectParts<AnthropicBlock>(response.content);
    return {
      text: content.map((block) => (block.type === 'text' ? String(block.text ?? '') : '')).join(''),
      toolCalls: content
        .filter((block) => block.type === 'tool_use')
        .map((block) => ({ id: String(block.id), name: String(block.name), arguments: JSON.stringify(block.input ?? {}) })),
      finishReason: finishReasonOf(response.stop_reason),
      raw: content,
    };
  }

  renderResponse(bodies: readonly unknown[], view: ClientView, finishReason: string): unknown {
    const first = bodies[0] as AnthropicResponse;
    const last = bodies[bodies.length - 1] as AnthropicResponse;
    const content: AnthropicBlock[] = [];
    for (const body of bodies as readonly AnthropicResponse[]) {
      for (const block of objectParts<AnthropicBlock>(body.content)) {
        if (block.type === 'text') {
          const text = view.showText(String(block.text ?? ''));
          if (!isBlank(text)) content.push({ ...block, text });
        } else if (block.type !== 'tool_use' || view.isClientCall(String(block.id))) {
          content.push(block);
        }
      }
    }
    const usage = sumUsage(bodies as readonly AnthropicResponse[]);
    const stopReason = stopReasonOf(finishReason);
    return {
      ...last,
      ...(first.id !== undefined ? { id: first.id } : {}),
      content,
      stop_reason: stopReason,
      stop_sequence: stopReason === last.stop_reason ? (last.stop_sequence ?? null) : null,
      ...(usage ? { usage } : {}),
    };
  }

  createStreamRewriter(view: ClientView): StreamRewriter {
    return new AnthropicStreamRewriter(view);
  }

  errorBody(error: EngramHttpError): unknown {
    return anthropicErrorBody(error.status, error.message);
  }
}

function withBlock(system: AnthropicRequest['system'], block: string): string | AnthropicBlock[] {
  if (Array.isArray(system)) return [...system, { type: 'text', text: block }];
  if (typeof system === 'string' && system !== '') return `${system}\n\n${block}`;
  return block;
}

function textOf(content: AnthropicMessage['content']): string {
  if (typeof content === 'string') return content;
  return objectParts<AnthropicBlock>(content)
    .filter((block) => block.type === 'text')
    .map((block) => String(block.text ?? ''))
    .join('\n');
}

function parseInput(text: string): unknown {
  try {
    const parsed: unknown = text.trim() === '' ? {} : JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
