import type { CallPlacement, ClientView } from '../client-view.js';
import type { ModelTurn, ToolCall } from '../turn.js';
import { SSE_DONE, sseFrame, type SseMessage } from '../sse.js';
import { addUsage } from '../usage.js';
import type { StreamRewriter } from '../wire-adapter.js';
import type { ChatChoice, ChatCompletion, ChatToolCallDelta } from './chat-types.js';

interface OpenCall {
  id: string;
  name: string;
  arguments: string;
  readonly placement: CallPlacement;
}

/**
 * Rewrites a Chat Completions SSE stream across the loop's rounds into one client stream:
 * markers stripped (split-safe), memory tool-call deltas dropped, client calls renumbered, the
 * role delta sent once, one id throughout, and the finish/usage/[DONE] frames held until the
 * loop is done. A chunk the rewrite does not touch goes out as the upstream's exact text.
 */
export class ChatStreamRewriter implements StreamRewriter {
  private round = 0;
  private id: string | undefined;
  private roleSent = false;
  private text = '';
  private calls = new Map<number, OpenCall>();
  private finishReason: string | null = null;
  private heldFinish: ChatCompletion | null = null;
  private heldUsage: ChatCompletion | null = null;
  private usage: Record<string, unknown> | null = null;
  private last: ChatCompletion | null = null;

  constructor(private readonly view: ClientView) {}

  beginRound(round: number): void {
    this.round = round;
  }

  push(message: SseMessage): string {
    const data = message.data;
    if (data === '[DONE]') return '';
    let chunk: ChatCompletion;
    try {
      chunk = JSON.parse(data) as ChatCompletion;
    } catch {
      return sseFrame(data);
    }
    if (typeof chunk !== 'object' || chunk === null || 'error' in chunk) return sseFrame(data);
    this.last = chunk;
    let changed = false;
    if (this.id === undefined) this.id = chunk.id;
    else if (chunk.id !== this.id) {
      chunk.id = this.id;
      changed = true;
    }
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    if (chunk.usage) {
      this.usage = addUsage(this.usage, chunk.usage);
      if (choices.length === 0) {
        this.heldUsage = chunk;
        return '';
      }
    }
    const choice = choices[0];
    if (!choice) return changed ? sseFrame(JSON.stringify(chunk)) : sseFrame(data);
    const delta = choice.delta ?? {};

    if (delta.role !== undefined) {
      if (this.roleSent) {
        delete delta.role;
        changed = true;
      } else this.roleSent = true;
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.text += delta.content;
      const shown = this.view.pushText(delta.content);
      if (shown !== delta.content) {
        delta.content = shown;
        changed = true;
      }
    }
    if (Array.isArray(delta.tool_calls)) {
      const kept = this.routeToolCalls(delta.tool_calls);
      if (kept.length !== delta.tool_calls.length || kept.some((call, i) => call !== delta.tool_calls?.[i])) {
        changed = true;
        if (kept.length > 0) delta.tool_calls = kept;
        else delete delta.tool_calls;
      }
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
      this.finishReason = choice.finish_reason;
      this.heldFinish = { ...chunk, choices: [{ ...choice, delta: {}, finish_reason: choice.finish_reason }] };
      if (chunk.usage) delete chunk.usage;
      choice.finish_reason = null;
      changed = true;
      if (isEmptyDelta(delta)) return '';
    } else if (chunk.usage && choices.length > 0) {
      delete chunk.usage;
      changed = true;
    }
    if (!changed) return sseFrame(data);
    if (isEmptyDelta(delta) && choices.length === 1 && !this.isFirstFrame(delta)) return '';
    return sseFrame(JSON.stringify(chunk));
  }

  endRound(): ModelTurn {
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id, name: call.name, arguments: call.arguments }));
    const turn: ModelTurn = { text: this.text, toolCalls, finishReason: this.finishReason };
    this.text = '';
    this.calls = new Map();
    this.finishReason = null;
    return turn;
  }

  finish(finishReason: string): string {
    let out = '';
    const template = this.heldFinish ?? this.last ?? { id: this.id, object: 'chat.completion.chunk', choices: [] };
    const rest = this.view.flushText();
    if (rest !== '') out += sseFrame(JSON.stringify(withChoice(template, this.id, { index: 0, delta: { content: rest }, finish_reason: null })));
    const closing = withChoice(template, this.id, { ...(template.choices[0] ?? { index: 0 }), delta: {}, finish_reason: finishReason });
    if (this.usage && !this.heldUsage) closing.usage = this.usage;
    out += sseFrame(JSON.stringify(closing));
    if (this.heldUsage) out += sseFrame(JSON.stringify({ ...this.heldUsage, id: this.id ?? this.heldUsage.id, usage: this.usage }));
    return out + SSE_DONE;
  }

  fail(status: number, message: string): string {
    const error = { message, type: 'upstream_error', code: status === 504 ? 'upstream_timeout' : 'upstream_unavailable' };
    return sseFrame(JSON.stringify({ error })) + SSE_DONE;
  }

  private routeToolCalls(deltas: ChatToolCallDelta[]): ChatToolCallDelta[] {
    const kept: ChatToolCallDelta[] = [];
    for (const delta of deltas) {
      let call = this.calls.get(delta.index);
      if (!call) {
        const id = delta.id ?? `call_${this.round}_${delta.index}`;
        const name = delta.function?.name ?? '';
        call = { id, name, arguments: '', placement: this.view.openCall(id, name) };
        this.calls.set(delta.index, call);
      }
      call.arguments += delta.function?.arguments ?? '';
      if (call.placement.hidden) continue;
      kept.push(call.placement.index === delta.index ? delta : { ...delta, index: call.placement.index });
    }
    return kept;
  }

  private isFirstFrame(delta: ChatChoice['delta']): boolean {
    return delta?.role !== undefined;
  }
}

function isEmptyDelta(delta: NonNullable<ChatChoice['delta']>): boolean {
  for (const key in delta) {
    const value = delta[key];
    if (key === 'content' ? typeof value === 'string' && value !== '' : value !== undefined && value !== null) return false;
  }
  return true;
}

function withChoice(template: ChatCompletion, id: string | undefined, choice: ChatChoice): ChatCompletion {
  const { usage: _usage, ...rest } = template;
  return { ...rest, ...(id !== undefined ? { id } : {}), choices: [choice] };
}
