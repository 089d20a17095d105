import { describe, expect, it } from '@jest/globals';
import { PendingMemoryOutputs } from './responses-pending-outputs.js';

const output = (callId: string) => ({ type: 'function_call_output', call_id: callId, output: 'Stored [id:m1] x' });

describe('PendingMemoryOutputs', () => {
  it('owes a response’s memory outputs to its continuations until they expire', () => {
    let now = 0;
    const pending = new PendingMemoryOutputs({ maxEntries: 10, ttlMs: 1_000, now: () => now });
    pending.keep('resp_1', [output('call_m')]);
    expect(pending.owedTo('resp_1')).toEqual([output('call_m')]);
    expect(pending.owedTo('resp_1')).toEqual([output('call_m')]);
    expect(pending.owedTo('resp_other')).toEqual([]);
    now = 1_000;
    expect(pending.owedTo('resp_1')).toEqual([]);
  });

  it('forgets the oldest responses first when full', () => {
    const pending = new PendingMemoryOutputs({ maxEntries: 2, ttlMs: 60_000 });
    pending.keep('resp_1', [output('a')]);
    pending.keep('resp_2', [output('b')]);
    pending.keep('resp_3', [output('c')]);
    expect(pending.owedTo('resp_1')).toEqual([]);
    expect(pending.owedTo('resp_2')).toEqual([output('b')]);
    expect(pending.owedTo('resp_3')).toEqual([output('c')]);
  });
});
