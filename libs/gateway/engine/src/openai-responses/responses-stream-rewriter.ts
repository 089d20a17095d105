import type { ClientView } from '../client-view.js';
import { sseEvent, sseFrame, type SseMessage } from '../sse.js';
import type { ModelTurn, ToolCall } from '../turn.js';
import { addUsage } from '../usage.js';
import type { StreamRewriter } from '../wire-adapter.js';
import { toolCallOf, withoutMemoryTools } from './responses-items.js';
import type { ResponsesItem, ResponsesResponse, ResponsesRound } from './responses-types.js';

/** One upstream output item of the current round. */
interface ItemState {
  readonly hidden: boolean;
  readonly clientIndex: number;
  /** The item as the model produced it (from output_item.done, else as added). */
  item: ResponsesItem;
  arguments: string;
  /** Visible text per content part, for the done events. */
  readonly visible: Map<number, string>;
}

type Event = Record<string, unknown> & { type?: string };

/**
 * Rewrites a Responses event stream across the loop's rounds into one client response: one
 * response.created and response.in_progress, memory function_call items and all their events
 * removed, output_index renumbered so the client's items are 0, 1, 2... across rounds, text
 * with markers stripped (done events carry the visible text), sequence_number counted afresh
 * so it stays monotonic, and one response.completed at the end whose response has the client's
 * items only, the summed usage, and the last round's id (the one `previous_response_id` needs).
 */
export class ResponsesStreamRewriter implements StreamRewriter {
  private sequence = 0;
  private nextIndex = 0;
  private items = new Map<number, ItemState>();
  private readonly sent = new Set<string>();
  private readonly clientOutput: ResponsesItem[] = [];
  private snapshot: ResponsesResponse | null = null;
  private terminal: { type: string; response: ResponsesResponse } | null = null;
  private usage: Record<string, unknown> | null = null;
  private text = '';
  private failed = false;

  constructor(private readonly view: ClientView) {}

  beginRound(): void {
    this.terminal = null;
  }

  push(message: SseMessage): string {
    let data: Event;
    try {
      data = JSON.parse(message.data) as Event;
    } catch {
      return message.data === '[DONE]' ? '' : sseFrame(message.data);
    }
    const type = String(data.type ?? message.event ?? '');
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued': {
        this.snapshot ??= data['response'] as ResponsesResponse;
        if (this.sent.has(type)) return '';
        this.sent.add(type);
        return this.emit(type, { ...data, response: this.shown(data['response'] as ResponsesResponse) });
      }
      case 'response.output_item.added':
        return this.itemAdded(data);
      case 'response.output_item.done':
        return this.itemDone(data);
      case 'response.output_text.delta':
        return this.textDelta(data);
      case 'response.output_text.done':
        return this.textDone(data);
      case 'response.content_part.done':
        return this.partDone(data);
      case 'response.function_call_arguments.delta': {
        const state = this.items.get(Number(data['output_index']));
        if (state) state.arguments += String(data['delta'] ?? '');
        return this.forItem(type, data);
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = (data['response'] ?? {}) as ResponsesResponse;
        this.terminal = { type, response };
        if (response.usage) this.usage = addUsage(this.usage, response.usage);
        return '';
      }
      case 'response.failed':
      case 'error':
        this.failed = true;
        return this.emit(type, data);
      default:
        return this.forItem(type, data);
    }
  }

  endRound(): ModelTurn {
    const states = [...this.items.entries()].sort(([a], [b]) => a - b).map(([, state]) => state);
    const toolCalls = states.map((state) => toolCallOf(state.item, state.arguments)).filter((call): call is ToolCall => call !== null);
    const status = this.terminal?.response.status;
    const turn: ModelTurn = {
      text: this.text,
      // A round the upstream failed is over: its calls must not run, nor start another round.
      toolCalls: this.failed ? [] : toolCalls,
      finishReason: toolCalls.length > 0 ? 'tool_calls' : status === 'incomplete' ? 'length' : this.terminal ? 'stop' : null,
      raw: { responseId: this.terminal?.response.id, items: states.map((state) => state.item) } satisfies ResponsesRound,
    };
    this.items = new Map();
    this.text = '';
    return turn;
  }

  finish(): string {
    if (this.failed) return '';
    const type = this.terminal?.type ?? 'response.completed';
    const base = this.terminal?.response ?? { ...this.snapshot, status: 'completed' };
    const output = this.clientOutput.filter((item) => item !== undefined);
    const response = { ...this.shown(base), output, ...(this.usage ? { usage: this.usage } : {}) };
    return this.emit(type, { type, response });
  }

  fail(status: number, message: string): string {
    if (this.failed) return '';
    this.failed = true;
    const error = errorOf(status, message);
    if (!this.snapshot) return this.emit('error', { type: 'error', code: error.code, message: error.message, param: null });
    return this.emit('response.failed', {
      type: 'response.failed',
      response: {
        ...this.shown(this.snapshot),
        status: 'failed',
        error,
        output: this.clientOutput.filter((item) => item !== undefined),
        usage: this.usage,
      },
    });
  }

  private shown(response: ResponsesResponse): ResponsesResponse {
    return withoutMemoryTools(response, (name) => this.view.isHidden(name));
  }

  private itemAdded(data: Event): string {
    const item = (data['item'] ?? {}) as ResponsesItem;
    const hidden = item.type === 'function_call' && this.view.openCall(String(item['call_id']), String(item['name'])).hidden;
    const state: ItemState = { hidden, clientIndex: hidden ? -1 : this.nextIndex++, item, arguments: '', visible: new Map() };
    this.items.set(Number(data['output_index']), state);
    return hidden ? '' : this.emit('response.output_item.added', { ...data, output_index: state.clientIndex });
  }

  private itemDone(data: Event): string {
    const state = this.items.get(Number(data['output_index']));
    const item = (data['item'] ?? {}) as ResponsesItem;
    if (!state) return this.emit('response.output_item.done', data);
    state.item = item;
    if (state.hidden) return '';
    const shown = item.type === 'message' ? { ...item, content: this.visibleContent(item, state) } : item;
    this.clientOutput[state.clientIndex] = shown;
    return this.emit('response.output_item.done', { ...data, output_index: state.clientIndex, item: shown });
  }

  private textDelta(data: Event): string {
    const state = this.items.get(Number(data['output_index']));
    const delta = String(data['delta'] ?? '');
    this.text += delta;
    if (!state) return this.emit('response.output_text.delta', data);
    const shown = this.view.pushText(delta);
    if (shown === '') return '';
    this.addVisible(state, Number(data['content_index']), shown);
    return this.emit('response.output_text.delta', { ...data, output_index: state.clientIndex, delta: shown });
  }

  private textDone(data: Event): string {
    const state = this.items.get(Number(data['output_index']));
    if (!state) return this.emit('response.output_text.done', data);
    const contentIndex = Number(data['content_index']);
    const rest = this.view.flushText();
    let out = '';
    if (rest !== '') {
      this.addVisible(state, contentIndex, rest);
      out += this.emit('response.output_text.delta', {
        type: 'response.output_text.delta',
        item_id: data['item_id'],
        output_index: state.clientIndex,
        content_index: contentIndex,
        delta: rest,
        logprobs: [],
      });
    }
    return out + this.emit('response.output_text.done', { ...data, output_index: state.clientIndex, text: state.visible.get(contentIndex) ?? '' });
  }

  private partDone(data: Event): string {
    const state = this.items.get(Number(data['output_index']));
    const part = (data['part'] ?? {}) as ResponsesItem;
    if (!state || part.type !== 'output_text') return this.forItem('response.content_part.done', data);
    const text = state.visible.get(Number(data['content_index'])) ?? '';
    return this.emit('response.content_part.done', { ...data, output_index: state.clientIndex, part: { ...part, text } });
  }

  /** An event about one output item: dropped when the item is hidden, renumbered otherwise. */
  private forItem(type: string, data: Event): string {
    if (!('output_index' in data)) return this.emit(type, data);
    const state = this.items.get(Number(data['output_index']));
    if (!state) return this.emit(type, data);
    if (state.hidden) return '';
    return this.emit(type, { ...data, output_index: state.clientIndex });
  }

  private visibleContent(item: ResponsesItem, state: ItemState): unknown[] {
    const content = Array.isArray(item['content']) ? (item['content'] as ResponsesItem[]) : [];
    return content.map((part, index) => (part.type === 'output_text' ? { ...part, text: state.visible.get(index) ?? '' } : part));
  }

  private addVisible(state: ItemState, contentIndex: number, text: string): void {
    state.visible.set(contentIndex, (state.visible.get(contentIndex) ?? '') + text);
  }

  private emit(type: string, data: Event): string {
    return sseEvent(type, { ...data, type, sequence_number: this.sequence++ });
  }
}

function errorOf(status: number, message: string): { code: string; message: string } {
  try {
    const parsed = JSON.parse(message) as { error?: { message?: unknown; code?: unknown; type?: unknown } };
    if (typeof parsed.error?.message === 'string') {
      const code =
        typeof parsed.error.code === 'string' ? parsed.error.code : typeof parsed.error.type === 'string' ? parsed.error.type : 'upstream_error';
      return { code, message: parsed.error.message };
    }
  } catch {
    // Not JSON: a plain message.
  }
  return { code: status === 504 ? 'upstream_timeout' : 'upstream_error', message };
}
