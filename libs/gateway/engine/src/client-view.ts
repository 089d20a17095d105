import { MarkerStripper } from './marker-stripper.js';

/** Whether a tool call is the engine's (hidden) or the client's, and its client-visible index. */
export interface CallPlacement {
  readonly hidden: boolean;
  /** Index among the calls the client sees (renumbered so hidden calls leave no gap); -1 when hidden. */
  readonly index: number;
}

/**
 * What the client of one response sees, across every round of the tool loop: text with markers
 * removed, its own tool calls renumbered, memory calls gone. One per client response; adapters
 * feed it every text while rewriting a stream or rendering a body (it is the one place markers
 * are stripped), the loop reads it to decide and to hand off extraction.
 */
export class ClientView {
  private readonly stripper = new MarkerStripper();
  private visible = '';
  private nextIndex = 0;
  private readonly clientCallIds = new Set<string>();

  constructor(private readonly isMemoryTool: (name: string) => boolean) {}

  /** A piece of assistant text; returns the part the client may see now. */
  pushText(text: string): string {
    const shown = this.stripper.push(text);
    this.visible += shown;
    return shown;
  }

  /** End of a text (a block, or the response): text held back as a possible marker start that was not one. */
  flushText(): string {
    const shown = this.stripper.flush();
    this.visible += shown;
    return shown;
  }

  /** One whole text (a non-streamed text block): the part the client may see. */
  showText(text: string): string {
    return this.pushText(text) + this.flushText();
  }

  /** Called once per tool call, when its name is known (a stream's first delta of the call). */
  openCall(id: string, name: string): CallPlacement {
    if (this.isMemoryTool(name)) return HIDDEN;
    this.clientCallIds.add(id);
    return { hidden: false, index: this.nextIndex++ };
  }

  isClientCall(id: string): boolean {
    return this.clientCallIds.has(id);
  }

  isHidden(name: string): boolean {
    return this.isMemoryTool(name);
  }

  /** All text the client has been shown so far. */
  visibleText(): string {
    return this.visible;
  }

  suggestions(): readonly string[] {
    return this.stripper.suggestions();
  }
}

const HIDDEN: CallPlacement = { hidden: true, index: -1 };
