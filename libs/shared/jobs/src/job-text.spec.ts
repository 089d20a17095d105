import { describe, expect, it } from '@jest/globals';
import { jobDataHolds } from './job-text.js';

describe('jobDataHolds', () => {
  const extraction = {
    pool: 'p',
    suggestions: ['The door code is 4711'],
    exchange: { user: 'Remember:\nthe  door code is 4711, please', assistant: 'Noted.' },
    requestId: 'r1',
  };

  it('finds a text anywhere in the data, ignoring case and whitespace runs', () => {
    expect(jobDataHolds(extraction, 'the door code is 4711')).toBe(true);
    expect(jobDataHolds({ exchange: { user: 'x', assistant: 'THE DOOR\tCODE IS 4711' } }, 'the door code is 4711')).toBe(true);
  });

  it('does not match other texts, ids only, or an empty text', () => {
    expect(jobDataHolds(extraction, 'the door code is 0815')).toBe(false);
    expect(jobDataHolds({ pool: 'p', memoryId: 'abc', eventId: 'e1' }, 'door code')).toBe(false);
    expect(jobDataHolds(extraction, '   ')).toBe(false);
    expect(jobDataHolds(null, 'x')).toBe(false);
  });
});
