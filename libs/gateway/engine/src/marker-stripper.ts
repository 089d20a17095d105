const OPEN = '<MEMORY_SUGGEST>';
const CLOSE = '</MEMORY_SUGGEST>';

/**
 * Removes `<MEMORY_SUGGEST>...</MEMORY_SUGGEST>` from text that arrives in pieces, and keeps
 * what was inside. A piece that ends with the beginning of a tag is held back until the next
 * piece says whether it was one, so a marker split across stream chunks is still removed.
 * A marker left open at the end counts as a suggestion (the model ran out of tokens in it).
 */
export class MarkerStripper {
  private inside = false;
  private pending = '';
  private current = '';
  private readonly found: string[] = [];

  /** Feeds the next piece of text; returns what the client may see now. */
  push(text: string): string {
    if (!this.inside && this.pending === '' && !text.includes('<')) return text;
    let buffer = this.pending + text;
    this.pending = '';
    let visible = '';
    for (;;) {
      if (!this.inside) {
        const open = buffer.indexOf(OPEN);
        if (open >= 0) {
          visible += buffer.slice(0, open);
          buffer = buffer.slice(open + OPEN.length);
          this.inside = true;
          continue;
        }
        const keep = partialTagLength(buffer, OPEN);
        visible += buffer.slice(0, buffer.length - keep);
        this.pending = buffer.slice(buffer.length - keep);
        return visible;
      }
      const close = buffer.indexOf(CLOSE);
      if (close >= 0) {
        this.current += buffer.slice(0, close);
        this.keepSuggestion();
        buffer = buffer.slice(close + CLOSE.length);
        this.inside = false;
        continue;
      }
      const keep = partialTagLength(buffer, CLOSE);
      this.current += buffer.slice(0, buffer.length - keep);
      this.pending = buffer.slice(buffer.length - keep);
      return visible;
    }
  }

  /** End of the text: returns what was held back and is not a marker after all. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    if (this.inside) {
      this.current += rest;
      this.keepSuggestion();
      this.inside = false;
      return '';
    }
    return rest;
  }

  /** The marker contents seen so far, trimmed, empty ones left out. */
  suggestions(): readonly string[] {
    return this.found;
  }

  private keepSuggestion(): void {
    const suggestion = this.current.trim();
    this.current = '';
    if (suggestion !== '') this.found.push(suggestion);
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagLength(text: string, tag: string): number {
  for (let length = Math.min(text.length, tag.length - 1); length > 0; length--) {
    if (tag.startsWith(text.slice(text.length - length))) return length;
  }
  return 0;
}

/** Strips markers from a whole text at once (non-streamed answers). */
export function stripMarkers(text: string): { readonly visible: string; readonly suggestions: readonly string[] } {
  const stripper = new MarkerStripper();
  const visible = stripper.push(text) + stripper.flush();
  return { visible, suggestions: stripper.suggestions() };
}
