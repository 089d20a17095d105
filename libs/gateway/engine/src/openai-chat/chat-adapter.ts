import { randomUUID } from 'node:crypto';
import type { ClientView } from '../client-view.js';
import { clientError, openAiErrorBody } from '../errors.js';
import { MemoryToolObjects } from '../memory-tool-objects.js';
import { checkOpenAiTools, objectBody, objectParts } from '../request-shape.js';
import type { MemoryRound, MemoryToolDefinition, ModelTurn, ToolCall } from '../turn.js';
import { sumUsage } from '../usage.js';
import type { StreamRewriter, WireAdapter } from '../wire-adapter.js';
import type { ChatCompletion, ChatMessage, ChatRequest, ChatToolCall } from './chat-types.js';
import { ChatStreamRewriter } from './chat-stream-rewriter.js';

/** OpenAI Chat Completions (`POST /v1/chat/completions`) on the engine. */
export class OpenAiChatAdapter implements WireAdapter<ChatRequest> {
  private readonly memoryTools = new MemoryToolObjects((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
  private readonly sentinel = `\u0000engram-tools-${randomUUID()}`;

  readonly errorBody = openAiErrorBody;

  upstreamPath(): string {
    return '/chat/completions';
  }

  parseRequest(body: unknown): ChatRequest {
    const request = objectBody<ChatRequest>(body);
    if (!Array.isArray(request.messages) || !request.messages.every((m) => typeof m === 'object' && m !== null && typeof m.role === 'string')) {
      throw clientError(400, '`messages` must be an array of messages with a role', 'invalid_messages');
    }
    checkOpenAiTools(request.tools);
    return request;
  }

  isStream(request: ChatRequest): boolean {
    return request.stream === true;
  }

  supportsMemory(request: ChatRequest): boolean {
    return (request.n === undefined || request.n === null || request.n === 1) && request.functions === undefined;
  }

  lastUserText(request: ChatRequest): string {
    for (let i = request.messages.length - 1; i >= 0; i--) {
      const message = request.messages[i] as ChatMessage;
      if (message.role === 'user') return textOf(message.content);
    }
    return '';
  }

  clientToolNames(request: ChatRequest): ReadonlySet<string> {
    return this.memoryTools.clientToolNames(request.tools, (tool) => (tool as { function?: { name?: unknown } }).function?.name);
  }

  withMemory(request: ChatRequest, memory: { readonly tier1Block: string; readonly tools: readonly MemoryToolDefinition[] }): ChatRequest {
    let messages = request.messages;
    if (memory.tier1Block !== '') {
      messages = messages.slice();
      const first = messages[0];
      if (first && (first.role === 'system' || first.role === 'developer')) {
        messages[0] = { ...first, content: appendText(first.content, memory.tier1Block) };
      } else {
        messages.unshift({ role: 'system', content: memory.tier1Block });
      }
    }
    if (memory.tools.length === 0) return { ...request, messages };
    return { ...request, messages, tools: [...(request.tools ?? []), ...this.memoryTools.render(memory.tools)] };
  }

  withMemoryRound(request: ChatRequest, round: MemoryRound): ChatRequest {
    const assistant: ChatMessage = {
      role: 'assistant',
      content: round.text === '' ? null : round.text,
      tool_calls: round.calls.map(toChatCall),
    };
    const results: ChatMessage[] = round.results.map((result) => ({ role: 'tool', tool_call_id: result.callId, content: result.content }));
    return { ...request, messages: [...request.messages, assistant, ...results] };
  }

  serializeRequest(request: ChatRequest): string {
    const tools = request.tools;
    const memory = this.memoryTools.renderedTail(tools);
    if (!tools || memory === null) return JSON.stringify(request);
    // The memory tools' JSON never changes: splice the cached text in instead of serialising it again.
    const clientTools = tools.slice(0, tools.length - memory.count);
    const toolsJson = clientTools.length === 0 ? `[${memory.json}]` : `${JSON.stringify(clientTools).slice(0, -1)},${memory.json}]`;
    const json = JSON.stringify({ ...request, tools: this.sentinel });
    const marker = JSON.stringify(this.sentinel);
    const at = json.lastIndexOf(marker);
    return json.slice(0, at) + toolsJson + json.slice(at + marker.length);
  }

  passesUnchanged(body: string): boolean {
    return !body.includes('"tool_calls"') && !body.includes('MEMORY_SUGGEST');
  }

  readTurn(body: unknown): ModelTurn {
    const message = (body as ChatCompletion).choices?.[0]?.message;
    const choice = (body as ChatCompletion).choices?.[0];
    return {
      text: textOf(message?.content),
      toolCalls: (message?.tool_calls ?? []).map((call) => ({
        id: call.id,
        name: call.function?.name ?? '',
        arguments: call.function?.arguments ?? '',
      })),
      finishReason: choice?.finish_reason ?? null,
    };
  }

  renderResponse(bodies: readonly unknown[], view: ClientView, finishReason: string): unknown {
    const completions = bodies as readonly ChatCompletion[];
    // One running text across rounds, as the stream shows it.
    for (const body of completions) view.pushText(textOf(body.choices?.[0]?.message?.content));
    view.flushText();
    const last = completions[completions.length - 1] as ChatCompletion;
    const first = completions[0] as ChatCompletion;
    const [choice, ...otherChoices] = last.choices ?? [];
    if (!choice) return last;
    const message: ChatMessage = { ...(choice.message ?? { role: 'assistant' }) };
    const text = view.visibleText();
    message.content = text !== '' ? text : message.content === null || message.content === undefined ? null : '';
    const clientCalls = (message.tool_calls ?? []).filter((call) => view.isClientCall(call.id));
    if (clientCalls.length > 0) message.tool_calls = clientCalls;
    else delete message.tool_calls;
    const rendered: ChatCompletion = { ...last, choices: [{ ...choice, message, finish_reason: finishReason }, ...otherChoices] };
    if (first.id !== undefined) rendered.id = first.id;
    if (bodies.length > 1 && last.usage) rendered.usage = sumUsage(completions);
    return rendered;
  }

  createStreamRewriter(view: ClientView): StreamRewriter {
    return new ChatStreamRewriter(view);
  }
}

function toChatCall(call: ToolCall): ChatToolCall {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

/** A message content as text: a string, or the text parts of a content array. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return objectParts<{ type?: unknown; text?: unknown }>(content)
    .map((part) => (part.type === 'text' ? String(part.text ?? '') : ''))
    .join('');
}

function appendText(content: unknown, block: string): unknown {
  if (typeof content === 'string') return content === '' ? block : `${content}\n\n${block}`;
  if (Array.isArray(content)) return [...content, { type: 'text', text: block }];
  return block;
}
