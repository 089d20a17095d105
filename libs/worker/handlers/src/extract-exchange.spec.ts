import { describe, expect, it } from '@jest/globals';
import { explicitFacts } from './exchange-facts.js';
import { extractedMemoryId } from './extract-exchange.js';

describe('extractedMemoryId', () => {
  it('derives stored ids from the exchange and the text, whatever its case', () => {
    expect(extractedMemoryId('exchange-1', 'Uses pnpm')).toBe(extractedMemoryId('exchange-1', 'uses pnpm'));
    expect(extractedMemoryId('exchange-1', 'Uses pnpm')).not.toBe(extractedMemoryId('exchange-2', 'Uses pnpm'));
  });
});

describe('explicitFacts', () => {
  it('finds what a person asked to remember or said about themselves, and nothing else', () => {
    expect(explicitFacts('Please remember that we deploy on Fridays. I prefer tabs over spaces! What is 2+2?')).toEqual([
      'We deploy on Fridays',
      'I prefer tabs over spaces',
    ]);
    expect(explicitFacts('Can you fix this bug? It crashes.')).toEqual([]);
  });
});
