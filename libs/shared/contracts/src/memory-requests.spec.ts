import { CONTENT_MAX_CHARS } from '@engram/domain';
import { describe, expect, it } from '@jest/globals';
import { MemoryError } from './memory-error.js';
import { MemoryPattern } from './memory-pattern.js';
import { parseMemoryRequest, StoreRequestSchema } from './memory-requests.js';

const refusal = (pattern: Parameters<typeof parseMemoryRequest>[0], request: unknown): string => {
  try {
    parseMemoryRequest(pattern, request);
  } catch (error) {
    if (error instanceof MemoryError && error.code === 'invalid_request') return error.message;
    throw error;
  }
  throw new Error(`${pattern} took ${JSON.stringify(request)}`);
};

const store = { pool: 'team', actor: 'user', content: 'uses pnpm' };

describe('the memory requests’ schemas', () => {
  it('refuse a pool name that could be a path, naming the field', () => {
    for (const pool of ['..', '../x', 'A', '', 'a/b', null, 3]) {
      expect(refusal(MemoryPattern.Store, { ...store, pool })).toMatch(/^pool: /);
    }
    expect(parseMemoryRequest(MemoryPattern.Tier1, { pool: 'team-a.1' }).pool).toBe('team-a.1');
  });

  it('take content as every copy of it reads, and measure it after', () => {
    expect(parseMemoryRequest(MemoryPattern.Store, { ...store, content: '  a\r\nb\u0000  ' }).content).toBe('a\nb\ufffd');
    // Line endings count once they are \n: the text as stored is within the limit.
    const crlf = `${'x'.repeat(CONTENT_MAX_CHARS - 1)}\r\n`;
    expect(parseMemoryRequest(MemoryPattern.Store, { ...store, content: `y${crlf}` }).content).toHaveLength(CONTENT_MAX_CHARS);
    expect(refusal(MemoryPattern.Store, { ...store, content: '   ' })).toBe('content: must not be empty');
    expect(refusal(MemoryPattern.Store, { ...store, content: 'x'.repeat(CONTENT_MAX_CHARS + 1) })).toBe(
      `content: ${CONTENT_MAX_CHARS + 1} characters; the limit is ${CONTENT_MAX_CHARS}`,
    );
    expect(refusal(MemoryPattern.Store, { ...store, content: 42 })).toBe('content: must be a string');
  });

  it('name every field at fault in one answer', () => {
    expect(refusal(MemoryPattern.Store, { pool: 'team', actor: '', content: '', category: 'Gotcha' })).toBe(
      'actor: must be a non-empty string of at most 64 characters; content: must not be empty; category: expected preference, person, environment, project, decision, gotcha',
    );
    expect(
      refusal(MemoryPattern.Consolidate, {
        pool: 'team',
        actor: 'worker:consolidate',
        model: 'm',
        merges: [{ content: 'x', type: 'USER', supersedes: [] }],
      }),
    ).toBe('merges.0.supersedes: each merge must supersede at least one id');
  });

  it('fill in defaults and clamp limits rather than refuse a large one', () => {
    expect(parseMemoryRequest(MemoryPattern.Search, { pool: 'team', query: null })).toMatchObject({ query: '', limit: 10, actor: 'llm' });
    expect(parseMemoryRequest(MemoryPattern.Search, { pool: 'team', query: 'x', limit: 1000 }).limit).toBe(100);
    expect(parseMemoryRequest(MemoryPattern.Page, { pool: 'team', category: null })).toMatchObject({
      sort: 'created',
      archived: false,
      limit: 50,
      category: undefined,
    });
    expect(parseMemoryRequest(MemoryPattern.List, { pool: 'team' })).toMatchObject({ limit: 50, offset: 0 });
    expect(refusal(MemoryPattern.List, { pool: 'team', limit: 0 })).toBe('limit: must be a positive integer');
    expect(refusal(MemoryPattern.List, { pool: 'team', limit: 1.5 })).toBe('limit: must be a positive integer');
    expect(parseMemoryRequest(MemoryPattern.Delete, { pool: 'team', actor: 'user', id: 'abcd', reason: 'r'.repeat(600) }).reason).toHaveLength(500);
  });

  it('keep chosen ids and idempotency keys to what a URL and a header can carry', () => {
    expect(parseMemoryRequest(MemoryPattern.Store, { ...store, id: 'job-1_a' }).id).toBe('job-1_a');
    for (const id of ['abc', 'a b c d', 'x'.repeat(65), 'é123']) expect(refusal(MemoryPattern.Store, { ...store, id })).toMatch(/^id: /);
    expect(refusal(MemoryPattern.Store, { ...store, idempotencyKey: 'has space' })).toMatch(/^idempotencyKey: /);
  });

  it('are the fields a surface picks: a REST body or a tool call is checked by the rule memory applies', () => {
    const body = StoreRequestSchema.pick({ content: true, type: true, category: true }).strict();
    expect(body.safeParse({ content: 'x', colour: 'red' }).success).toBe(false);
    expect(body.parse({ content: ' x\r\n', category: null })).toEqual({ content: 'x', category: null });
  });
});
