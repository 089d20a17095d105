import { describe, expect, it } from '@jest/globals';
import { MemoryError } from '@engram/contracts';
import { CONTENT_MAX_CHARS } from '@engram/domain';
import { validCategory, validContent, validId, validLimit, validPool, validQuery } from './validation.js';

const rejects = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error instanceof MemoryError && error.code === 'invalid_request';
  }
  return false;
};

describe('request validation', () => {
  it('accepts pool names per docs/DESIGN.md and nothing that could be a path', () => {
    expect(validPool('team-a.1')).toBe('team-a.1');
    for (const pool of ['..', '../x', 'A', '', 'a/b', null, 3]) expect(rejects(() => validPool(pool))).toBe(true);
  });

  it('trims content and enforces its length limit', () => {
    expect(validContent('  x  ')).toBe('x');
    expect(validContent('x'.repeat(CONTENT_MAX_CHARS))).toHaveLength(CONTENT_MAX_CHARS);
    for (const content of ['', '   ', 'x'.repeat(CONTENT_MAX_CHARS + 1), 42, undefined]) expect(rejects(() => validContent(content))).toBe(true);
  });

  it('knows the categories and caller ids', () => {
    expect(validCategory(null)).toBeNull();
    expect(validCategory('gotcha')).toBe('gotcha');
    expect(rejects(() => validCategory('Gotcha'))).toBe(true);
    expect(validId('job-1_a')).toBe('job-1_a');
    for (const id of ['abc', 'a b c d', 'x'.repeat(65), 'é123']) expect(rejects(() => validId(id))).toBe(true);
  });

  it('caps limits and accepts any query text', () => {
    expect(validLimit(undefined, 10, 100)).toBe(10);
    expect(validLimit(1000, 10, 100)).toBe(100);
    expect(rejects(() => validLimit(0, 10, 100))).toBe(true);
    expect(rejects(() => validLimit(1.5, 10, 100))).toBe(true);
    expect(validQuery(undefined)).toBe('');
    expect(validQuery('"x" AND')).toBe('"x" AND');
    expect(rejects(() => validQuery({}))).toBe(true);
  });
});
