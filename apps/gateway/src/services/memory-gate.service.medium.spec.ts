import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryPattern } from '@engram/contracts';
import { GatewayTier1Cache } from '@engram/gateway-engine';
import { eventually, recordingLogger } from '@engram/testing';
import { memoryServicePerTest } from '../../../../libs/memory/store/src/testing/memory-service-per-test.js';
import { memoryInProcess, observed } from '../../../../tests/support/memory-in-process.js';
import { MemoryGate } from './memory-gate.service.js';

/** The gate in front of the real memory service; an outage is that service stopped (closed), and back is it reopened. */

const RETRY_AFTER_MS = 5_000;
const PROBE_EVERY_MS = 20;

const under = memoryServicePerTest();
const live = memoryInProcess(() => under.service);
const stop = () => under.service.close();
const restart = () => under.reopen();

async function newGate(options: { cacheTrusted?: boolean } = {}) {
  await live.call(MemoryPattern.Store, { pool: 'team', actor: 'user', content: 'uses fish shell', category: 'preference' });
  const memory = observed(live);
  const { logger, lines } = recordingLogger();
  const gate = new MemoryGate(new GatewayTier1Cache(memory, { ttlMs: 60_000 }), logger, {
    retryAfterMs: RETRY_AFTER_MS,
    probeEveryMs: PROBE_EVERY_MS,
    cacheTrusted: () => options.cacheTrusted ?? true,
    ping: () => memory.call(MemoryPattern.Ping, {}),
  });
  const tier1Calls = () => memory.calls.filter((call) => call.pattern === MemoryPattern.Tier1).length;
  return { gate, tier1Calls, lines };
}

const teamTier1 = { pool: 'team', block: expect.stringContaining('uses fish shell') };

describe('MemoryGate', () => {
  afterEach(() => {
    jest.useRealTimers();
  });

  it("gives the pool's Tier 1 and keeps it, so the next request pays no round trip", async () => {
    const { gate, tier1Calls } = await newGate();
    expect(await gate.tier1('team', 'r1')).toMatchObject(teamTier1);
    expect(await gate.tier1('team', 'r2')).toMatchObject(teamTier1);
    expect(tier1Calls()).toBe(1);
  });

  it('asks memory on every request while change announcements cannot arrive', async () => {
    const { gate, tier1Calls } = await newGate({ cacheTrusted: false });
    await gate.tier1('team', 'r1');
    await gate.tier1('team', 'r2');
    expect(tier1Calls()).toBe(2);
  });

  it('fails open: without memory a request gets null, and the next ones skip memory without waiting on it', async () => {
    const { gate, tier1Calls, lines } = await newGate();
    await stop();
    expect(await gate.tier1('team', 'r1')).toBeNull();
    expect(await gate.tier1('team', 'r2')).toBeNull();
    expect(await gate.tier1('other', 'r3')).toBeNull();
    expect(tier1Calls()).toBe(1);
    expect(lines.filter((line) => line.msg.startsWith('memory service unavailable'))).toEqual([
      expect.objectContaining({ code: 'unavailable', requestId: 'r1' }),
    ]);
  });

  it('asks again once the retry delay has passed, and says once that memory is back', async () => {
    // Only the clock is faked, to pass the retry delay; the service's own timers run for real.
    jest.useFakeTimers({ doNotFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'nextTick', 'queueMicrotask'] });
    const { gate, lines } = await newGate();
    await stop();
    await gate.tier1('team', 'r1');
    await restart();
    expect(await gate.tier1('team', 'r2')).toBeNull();
    jest.advanceTimersByTime(RETRY_AFTER_MS);
    expect(await gate.tier1('team', 'r3')).toMatchObject(teamTier1);
    await gate.tier1('team', 'r4');
    expect(lines.filter((line) => line.msg.startsWith('memory service answers again'))).toHaveLength(1);
  });

  it('notices an outage by its background probe, even while every pool is cached', async () => {
    const { gate, tier1Calls } = await newGate();
    await gate.tier1('team', 'r1');
    gate.start();
    try {
      await stop();
      await eventually(async () => expect(await gate.tier1('team', 'r2')).toBeNull());
      expect(tier1Calls()).toBe(1);

      // The probe's next answer ends the outage, well within the retry delay.
      await restart();
      await eventually(async () => expect(await gate.tier1('team', 'r3')).toMatchObject(teamTier1));
    } finally {
      gate.stop();
    }
  });
});
