import { describe, expect, it } from '@jest/globals';
import { addUsage, sumUsage } from './usage.js';

describe('usage over the rounds of a turn', () => {
  it('adds counts field by field, nested details too, and keeps fields only one round has', () => {
    expect(
      addUsage(
        { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 4 } },
        { prompt_tokens: 20, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 1 }, service_tier: 'default' },
      ),
    ).toEqual({ prompt_tokens: 30, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 5 }, service_tier: 'default' });
  });

  it('sums the rounds that report usage, and is null when none did', () => {
    expect(sumUsage([{ usage: { input_tokens: 1 } }, {}, { usage: null }, { usage: { input_tokens: 2 } }])).toEqual({ input_tokens: 3 });
    expect(sumUsage([{}, { usage: null }])).toBeNull();
  });
});
