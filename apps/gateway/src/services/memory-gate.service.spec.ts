import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryError, MemoryPattern, type Tier1Response } from '@engram/contracts';
import { GatewayTier1Cache, type MemoryPort } from '@engram/gateway-engine';
import { recordingLogger } from '@engram/testing';
import { MemoryGate } from './memory-gate.service.js';

const RETRY_AFTER_MS = 5_000;
const PROBE_EVERY_MS = 1_000;

/** Memory as the gateway sees it: answers Tier 1 or fails, and counts the calls that reached it. */
class ScriptedMemory implements MemoryPort {
  up = true;
  calls = 0;

  call: MemoryPort['call'] = async (pattern, request) => {
    this.calls += 1;
    if (!this.up) throw new MemoryError('unavailable', 'memory service unreachable');
    if (pattern !== MemoryPattern.Tier1) throw new Error(`unexpected ${pattern}`);
    const { pool } = request as { pool: string };
    const tier1: Tier1Response = { pool, block: `<memory of ${pool}>`, ids: [], seq: this.calls };
    return tier1 as never;
  };
}

function newGate(options: { cacheTrusted?: boolean } = {}) {
  const memory = new ScriptedMemory();
  const { logger, lines } = recordingLogger();
  const gate = new MemoryGate(new GatewayTier1Cache(memory, { ttlMs: 60_000 }), logger, {
    retryAfterMs: RETRY_AFTER_MS,
    probeEveryMs: PROBE_EVERY_MS,
    cacheTrusted: () => options.cacheTrusted ?? true,
    ping: () => memory.call(MemoryPattern.Tier1, { pool: 'probe' }),
  });
  return { gate, memory, lines };
}

describe('MemoryGate', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it("gives the pool's Tier 1 and keeps it, so the next request pays no round trip", async () => {
    const { gate, memory } = newGate();
    expect(await gate.tier1('team', 'r1')).toMatchObject({ pool: 'team', block: '<memory of team>' });
    expect(await gate.tier1('team', 'r2')).toMatchObject({ pool: 'team', block: '<memory of team>' });
    expect(memory.calls).toBe(1);
  });

  it('asks memory on every request while change announcements cannot arrive', async () => {
    const { gate, memory } = newGate({ cacheTrusted: false });
    await gate.tier1('team', 'r1');
    await gate.tier1('team', 'r2');
    expect(memory.calls).toBe(2);
  });

  it('fails open: without memory a request gets null, and the next ones skip memory without waiting on it', async () => {
    const { gate, memory, lines } = newGate();
    memory.up = false;
    expect(await gate.tier1('team', 'r1')).toBeNull();
    expect(await gate.tier1('team', 'r2')).toBeNull();
    expect(await gate.tier1('other', 'r3')).toBeNull();
    expect(memory.calls).toBe(1);
    expect(lines.filter((line) => line.msg.startsWith('memory service unavailable'))).toEqual([
      expect.objectContaining({ code: 'unavailable', requestId: 'r1' }),
    ]);
  });

  it('asks again once the retry delay has passed, and says once that memory is back', async () => {
    const { gate, memory, lines } = newGate();
    memory.up = false;
    await gate.tier1('team', 'r1');
    memory.up = true;
    jest.advanceTimersByTime(RETRY_AFTER_MS);
    expect(await gate.tier1('team', 'r2')).toMatchObject({ block: '<memory of team>' });
    await gate.tier1('team', 'r3');
    expect(lines.filter((line) => line.msg.startsWith('memory service answers again'))).toHaveLength(1);
  });

  it('notices an outage by its background probe, even while every pool is cached', async () => {
    const { gate, memory } = newGate();
    await gate.tier1('team', 'r1');
    gate.start();
    memory.up = false;
    await jest.advanceTimersByTimeAsync(PROBE_EVERY_MS);
    const callsBefore = memory.calls;
    expect(await gate.tier1('team', 'r2')).toBeNull();
    expect(memory.calls).toBe(callsBefore);

    memory.up = true;
    await jest.advanceTimersByTimeAsync(PROBE_EVERY_MS);
    expect(await gate.tier1('team', 'r3')).toMatchObject({ block: '<memory of team>' });
    gate.stop();
  });
});
