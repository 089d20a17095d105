import { describe, expect, it } from '@jest/globals';
import { isValidPoolName } from './pool.js';

describe('pool names', () => {
  it.each(['default', 'team-a', 'a', 'p.1_x', 'a'.repeat(64)])('accepts %s', (name) => {
    expect(isValidPoolName(name)).toBe(true);
  });
  it.each(['', '..', '.', '../etc', 'A', 'a/b', '-a', '.hidden', 'a'.repeat(65), 'a b', 'é'])('rejects %j', (name) => {
    expect(isValidPoolName(name)).toBe(false);
  });
});
