import type { ChatMessage, LlmPort } from '@engram/worker-handlers';

/** An upstream that answers from a script, one answer (or error) per call. */
export class ScriptedLlm implements LlmPort {
  readonly requests: { model: string; messages: readonly ChatMessage[] }[] = [];
  constructor(private readonly answers: (string | Error)[]) {}

  async complete(request: { model: string; messages: readonly ChatMessage[]; json: boolean }): Promise<string> {
    this.requests.push({ model: request.model, messages: [...request.messages] });
    const next = this.answers.shift();
    if (next === undefined) throw new Error('script exhausted');
    if (next instanceof Error) throw next;
    return next;
  }
}
