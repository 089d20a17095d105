import type { FinishReason } from '../turn.js';

const TO_FINISH: Readonly<Record<string, FinishReason>> = { end_turn: 'stop', tool_use: 'tool_calls', max_tokens: 'length' };
const TO_STOP: Readonly<Record<string, string>> = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' };

/** Anthropic's stop_reason in the engine's (OpenAI) spelling; reasons without an equivalent pass as they are. */
export function finishReasonOf(stopReason: string | null | undefined): FinishReason | null {
  if (stopReason === null || stopReason === undefined) return null;
  return TO_FINISH[stopReason] ?? stopReason;
}

/** The engine's finish reason back in Anthropic's spelling. */
export function stopReasonOf(finishReason: string): string {
  return TO_STOP[finishReason] ?? finishReason;
}
