import type { ClientView } from '../client-view.js';
import { sseEvent, sseFrame, sseVerbatim, type SseMessage } from '../sse.js';
import type { ModelTurn, ToolCall } from '../turn.js';
import { addUsage } from '../usage.js';
import type { StreamRewriter } from '../wire-adapter.js';
import { anthropicErrorEvent } from './anthropic-errors.js';
import { finishReasonOf, stopReasonOf } from './anthropic-stop-reason.js';
import { isBlank } from './anthropic-text.js';
import type { AnthropicBlock } from './anthropic-types.js';

/** One upstream content block of the current round. */
interface BlockState {
  readonly kind: 'text' | 'hidden' | 'other';
  /** Index the client sees; -1 until a text block shows something (or forever, when hidden). */
  clientIndex: number;
  /** The client's `content_block_start`, held for text blocks until they have visible text. */
  readonly start: Record<string, unknown>;
  /** Visible whitespace not sent yet: a block that never gets more is dropped. */
  heldText: string;
  /** The block as the model produced it (markers and all), for the turn and a memory round. */
  readonly raw: AnthropicBlock;
  json: string;
}

const MESSAGE_STOP = '{"type":"message_stop"}';

/** Fields of a message_delta's `usage` (cumulative counts of the message). */
const DELTA_USAGE_FIELDS = [
  'input_tokens',
  'cache_creation_input_tokens',
  'cache_read_input_tokens',
  'output_tokens',
  'output_tokens_details',
  'server_tool_use',
] as const;

/**
 * Rewrites Anthropic's event stream across the loop's rounds into one client message: one
 * message_start; content blocks renumbered with no gap where a memory tool_use was removed;
 * text with markers stripped, and a text block left empty by stripping not shown at all (the API
 * rejects empty text blocks when the client sends the message back); one message_delta with the
 * final stop_reason and usage summed over rounds; one message_stop. An event the rewrite does not
 * touch goes out as the upstream's exact text.
 */
export class AnthropicStreamRewriter implements StreamRewriter {
  private rounds = 0;
  private blocks = new Map<number, BlockState>();
  private nextIndex = 0;
  private startSent = false;
  private roundUsage: Record<string, unknown> | null = null;
  private usage: Record<string, unknown> | null = null;
  private stopReason: string | null = null;
  private stopSequence: string | null = null;
  private heldDelta: { data: string; parsed: Record<string, unknown> } | null = null;
  private failed = false;

  constructor(private readonly view: ClientView) {}

  beginRound(): void {
    this.rounds++;
  }

  push(message: SseMessage): string {
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(message.data) as Record<string, unknown>;
    } catch {
      return sseVerbatim(message);
    }
    switch (data['type']) {
      case 'message_start': {
        const start = data['message'] as { usage?: Record<string, unknown> } | undefined;
        this.roundUsage = start?.usage ? { ...start.usage } : {};
        if (this.startSent) return '';
        this.startSent = true;
        return sseVerbatim(message);
      }
      case 'content_block_start':
        return this.startBlock(data);
      case 'content_block_delta':
        return this.delta(message, data);
      case 'content_block_stop':
        return this.stopBlock(message, data);
      case 'message_delta': {
        const delta = (data['delta'] ?? {}) as { stop_reason?: string | null; stop_sequence?: string | null };
        this.stopReason = delta.stop_reason ?? null;
        this.stopSequence = delta.stop_sequence ?? null;
        const usage = (data['usage'] ?? {}) as Record<string, unknown>;
        // Like the SDK: a message_delta's counts are the message's totals, overwriting message_start's.
        for (const [key, value] of Object.entries(usage)) {
          if (value !== null && value !== undefined) this.roundUsage = { ...this.roundUsage, [key]: value };
        }
        this.heldDelta = { data: message.data, parsed: data };
        return '';
      }
      case 'message_stop':
        return '';
      case 'error':
        this.failed = true;
        return sseVerbatim(message);
      default:
        return sseVerbatim(message);
    }
  }

  endRound(): ModelTurn {
    const states = [...this.blocks.entries()].sort(([a], [b]) => a - b).map(([, state]) => state);
    const raw = states.map((state) => state.raw);
    const toolCalls: ToolCall[] = states
      .filter((state) => state.raw.type === 'tool_use')
      .map((state) => ({
        id: String(state.raw['id']),
        name: String(state.raw['name']),
        arguments: state.json !== '' ? state.json : JSON.stringify(state.raw['input'] ?? {}),
      }));
    const text = raw.map((block) => (block.type === 'text' ? String(block['text'] ?? '') : '')).join('');
    if (this.roundUsage) this.usage = addUsage(this.usage, this.roundUsage);
    this.roundUsage = null;
    this.blocks = new Map();
    // A round the upstream failed is over: its calls must not run, nor start another round.
    if (this.failed) return { text, toolCalls: [], finishReason: null, raw };
    return { text, toolCalls, finishReason: finishReasonOf(this.stopReason), raw };
  }

  finish(finishReason: string): string {
    if (this.failed) return '';
    const stopReason = stopReasonOf(finishReason);
    let delta: string;
    if (this.rounds === 1 && this.heldDelta && stopReason === this.stopReason) {
      delta = this.heldDelta.data;
    } else {
      const upstreamDelta = (this.heldDelta?.parsed['delta'] ?? {}) as Record<string, unknown>;
      const usage: Record<string, unknown> = {};
      for (const field of DELTA_USAGE_FIELDS) {
        if (this.usage?.[field] !== undefined) usage[field] = this.usage[field];
      }
      if (usage['output_tokens'] === undefined) usage['output_tokens'] = 0;
      delta = JSON.stringify({
        ...(this.heldDelta?.parsed ?? {}),
        type: 'message_delta',
        delta: { ...upstreamDelta, stop_reason: stopReason, stop_sequence: stopReason === this.stopReason ? this.stopSequence : null },
        usage,
      });
    }
    return sseFrame(delta, 'message_delta') + sseFrame(MESSAGE_STOP, 'message_stop');
  }

  fail(status: number, message: string): string {
    if (this.failed) return '';
    this.failed = true;
    return anthropicErrorEvent(status, message);
  }

  private startBlock(data: Record<string, unknown>): string {
    const index = Number(data['index']);
    const block = { ...((data['content_block'] ?? { type: 'text' }) as AnthropicBlock) };
    if (block.type === 'text') {
      const initial = String(block['text'] ?? '');
      const state = this.track(index, 'text', { ...data, content_block: { ...block, text: '' } }, block);
      return initial === '' ? '' : this.showText(state, initial);
    }
    const hidden = block.type === 'tool_use' && this.view.openCall(String(block['id']), String(block['name'])).hidden;
    const state = this.track(index, hidden ? 'hidden' : 'other', data, block);
    if (hidden) return '';
    state.clientIndex = this.nextIndex++;
    return sseEvent('content_block_start', { ...data, index: state.clientIndex });
  }

  private delta(message: SseMessage, data: Record<string, unknown>): string {
    const state = this.blocks.get(Number(data['index']));
    if (!state) return sseVerbatim(message);
    const delta = (data['delta'] ?? {}) as Record<string, unknown>;
    const raw = state.raw;
    switch (delta['type']) {
      case 'text_delta': {
        const text = String(delta['text'] ?? '');
        raw['text'] = String(raw['text'] ?? '') + text;
        if (state.kind !== 'text') return this.renumbered(message, data, state);
        const shown = this.view.pushText(text);
        // Untouched text in an open block at its own index keeps the upstream's exact bytes.
        if (shown === text && state.clientIndex === Number(data['index'])) return sseVerbatim(message);
        return this.reveal(state, shown);
      }
      case 'input_json_delta':
        state.json += String(delta['partial_json'] ?? '');
        break;
      case 'thinking_delta':
        raw['thinking'] = String(raw['thinking'] ?? '') + String(delta['thinking'] ?? '');
        break;
      case 'signature_delta':
        raw['signature'] = delta['signature'];
        break;
      case 'citations_delta':
        raw['citations'] = [...((raw['citations'] as unknown[] | null | undefined) ?? []), delta['citation']];
        break;
    }
    return state.kind === 'hidden' ? '' : this.renumbered(message, data, state);
  }

  private stopBlock(message: SseMessage, data: Record<string, unknown>): string {
    const state = this.blocks.get(Number(data['index']));
    if (!state) return sseVerbatim(message);
    if (state.json !== '') {
      try {
        state.raw['input'] = JSON.parse(state.json);
      } catch {
        // Malformed arguments: the executor answers the model with an error it can read.
      }
    }
    if (state.kind === 'hidden') return '';
    if (state.kind === 'text') {
      const out = this.reveal(state, this.view.flushText());
      return state.clientIndex < 0 ? out : out + sseEvent('content_block_stop', { ...data, index: state.clientIndex });
    }
    return this.renumbered(message, data, state);
  }

  /** Text the model wrote into a text block: markers out, the block opened once it has something to show. */
  private showText(state: BlockState, text: string): string {
    return this.reveal(state, this.view.pushText(text));
  }

  /** Visible text of a text block: held while blank, then the block's start, then deltas. */
  private reveal(state: BlockState, shown: string): string {
    if (shown === '') return '';
    let out = '';
    let visible = shown;
    if (state.clientIndex < 0) {
      state.heldText += shown;
      if (isBlank(state.heldText)) return '';
      state.clientIndex = this.nextIndex++;
      out += sseEvent('content_block_start', { ...state.start, index: state.clientIndex });
      visible = state.heldText;
      state.heldText = '';
    }
    return (
      out + sseEvent('content_block_delta', { type: 'content_block_delta', index: state.clientIndex, delta: { type: 'text_delta', text: visible } })
    );
  }

  private renumbered(message: SseMessage, data: Record<string, unknown>, state: BlockState): string {
    return Number(data['index']) === state.clientIndex ? sseVerbatim(message) : sseEvent(String(data['type']), { ...data, index: state.clientIndex });
  }

  private track(index: number, kind: BlockState['kind'], start: Record<string, unknown>, raw: AnthropicBlock): BlockState {
    const state: BlockState = { kind, clientIndex: -1, start, heldText: '', raw, json: '' };
    this.blocks.set(index, state);
    return state;
  }
}
