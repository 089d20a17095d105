import fc from 'fast-check';
import { describe, expect, it } from '@jest/globals';
import { MarkerStripper, stripMarkers } from './marker-stripper.js';

function feed(pieces: readonly string[]): { visible: string; suggestions: readonly string[] } {
  const stripper = new MarkerStripper();
  let visible = '';
  for (const piece of pieces) visible += stripper.push(piece);
  visible += stripper.flush();
  return { visible, suggestions: stripper.suggestions() };
}

/** Cuts a text at the given positions. */
function cut(text: string, positions: readonly number[]): string[] {
  const sorted = [...new Set(positions.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const at of sorted) {
    pieces.push(text.slice(from, at));
    from = at;
  }
  pieces.push(text.slice(from));
  return pieces;
}

describe('MarkerStripper', () => {
  it('removes markers and keeps their contents', () => {
    expect(stripMarkers('Sure.<MEMORY_SUGGEST> User likes tea </MEMORY_SUGGEST> Done.')).toEqual({
      visible: 'Sure. Done.',
      suggestions: ['User likes tea'],
    });
  });

  it('removes a marker split at every possible boundary', () => {
    const text = 'a <MEMORY_SUGGEST>fact one</MEMORY_SUGGEST> b <MEMORY_SUGGEST>fact two</MEMORY_SUGGEST>';
    for (let i = 0; i <= text.length; i++) {
      for (let j = i; j <= text.length; j++) {
        expect(feed([text.slice(0, i), text.slice(i, j), text.slice(j)])).toEqual({ visible: 'a  b ', suggestions: ['fact one', 'fact two'] });
      }
    }
  });

  it('gives back text that only looked like the start of a marker', () => {
    expect(feed(['x <MEM', 'O but not'])).toEqual({ visible: 'x <MEMO but not', suggestions: [] });
    expect(feed(['ends with <MEMORY_SUG'])).toEqual({ visible: 'ends with <MEMORY_SUG', suggestions: [] });
    expect(feed(['a < b', ' and <', '/p>'])).toEqual({ visible: 'a < b and </p>', suggestions: [] });
  });

  it('treats a marker left open at the end as a suggestion the client never sees', () => {
    expect(feed(['ok <MEMORY_SUGGEST>cut sh', 'ort</MEMORY_'])).toEqual({ visible: 'ok ', suggestions: ['cut short</MEMORY_'] });
  });

  it('gives the same result however the text is chunked (property)', () => {
    const piece = fc.constantFrom('<MEMORY_SUGGEST>', '</MEMORY_SUGGEST>', '<', '<MEM', 'tea', ' ', 'é', '🙂', 'x>');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 8 }), (parts, positions) => {
        const text = parts.join('');
        expect(feed(cut(text, positions))).toEqual(feed([text]));
      }),
    );
  });
});
