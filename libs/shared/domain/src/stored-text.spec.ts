import { describe, expect, it } from '@jest/globals';
import { REPLACEMENT, storedText } from './stored-text.js';

describe('storedText', () => {
  it('turns a lone surrogate half into one U+FFFD, as a UTF-8 encoder would, and keeps whole pairs', () => {
    expect(storedText('lone \ud800 surrogate')).toBe(`lone ${REPLACEMENT} surrogate`);
    expect(storedText('trail \udc00 only')).toBe(`trail ${REPLACEMENT} only`);
    expect(storedText('cut emoji \ud83d')).toBe(`cut emoji ${REPLACEMENT}`);
    expect(storedText('emoji \ud83d\ude00 and \ud83d\ude00\ud83d')).toBe(`emoji \u{1f600} and \u{1f600}${REPLACEMENT}`);
    const stored = storedText('x\udfff\ud800y');
    expect(stored).toBe(`x${REPLACEMENT}${REPLACEMENT}y`);
    expect(Buffer.from(stored).toString('utf8')).toBe(stored);
  });

  it('replaces NUL, ESC and the other control characters, keeps tab and line feed, and makes CR LF and CR a line feed', () => {
    expect(storedText('a\u0000b')).toBe(`a${REPLACEMENT}b`);
    expect(storedText('\u001b[31mred\u001b[0m')).toBe(`${REPLACEMENT}[31mred${REPLACEMENT}[0m`);
    expect(storedText('bell\u0007 del\u007f c1\u0085 \u009b')).toBe(`bell${REPLACEMENT} del${REPLACEMENT} c1${REPLACEMENT} ${REPLACEMENT}`);
    expect(storedText('vt\u000bff\u000c')).toBe(`vt${REPLACEMENT}ff${REPLACEMENT}`);
    expect(storedText('one\r\ntwo\rthree\n\tfour')).toBe('one\ntwo\nthree\n\tfour');
  });

  it('leaves ordinary text as it is', () => {
    const text = 'Déjà vu — 東京 ✓ "quotes" § and \\ backslashes';
    expect(storedText(text)).toBe(text);
    expect(storedText(REPLACEMENT)).toBe(REPLACEMENT);
  });
});
