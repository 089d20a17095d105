import { describe, expect, it } from '@jest/globals';
import { MAX_JSON_DEPTH, nestsDeeperThan, parseJsonBody } from './json-body.js';
import { refusalOf } from './testing/refusal.js';

const nested = (depth: number): Buffer => Buffer.from('['.repeat(depth) + ']'.repeat(depth));

describe('parseJsonBody', () => {
  it('parses a body up to the depth limit', () => {
    expect(parseJsonBody(Buffer.from('{"model":"m","messages":[{"role":"user","content":"hi"}]}'))).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(() => parseJsonBody(nested(MAX_JSON_DEPTH))).not.toThrow();
  });

  it('refuses a body nested 10,000 deep with a 400 naming the limit, without parsing it', () => {
    const failure = refusalOf(() => parseJsonBody(nested(10_000)));
    expect(failure.status).toBe(400);
    expect(failure.body().error).toEqual({
      message: `the request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`,
      type: 'invalid_request_error',
      code: 'json_too_deep',
    });
    const objects = Buffer.from('{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000));
    expect(refusalOf(() => parseJsonBody(objects)).body().error.code).toBe('json_too_deep');
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ content: '['.repeat(1_000) + '"\\"{{{' + '{'.repeat(1_000), ok: [[1]] });
    expect(nestsDeeperThan(Buffer.from(text), 3)).toBe(false);
    expect(parseJsonBody(Buffer.from(text))).toMatchObject({ ok: [[1]] });
    // A string ending in an escaped backslash ends there: the brackets after it count.
    expect(nestsDeeperThan(Buffer.from('["a\\\\",[[[1]]]]'), 3)).toBe(true);
  });

  it('answers malformed and empty bodies with 400s', () => {
    expect(refusalOf(() => parseJsonBody(Buffer.from('{"model":'))).body().error.code).toBe('invalid_json');
    expect(refusalOf(() => parseJsonBody(Buffer.alloc(0))).status).toBe(400);
    expect(parseJsonBody(Buffer.alloc(0), { emptyAs: {} })).toEqual({});
  });
});
