import { JobName, QueueName } from '@engram/jobs';
import { describe, expect, it } from '@jest/globals';
import { assertEveryJobHandled, type ProcessorDeclaration } from './handler-coverage.js';
import { PROCESSOR_DECLARATIONS } from './processors/declarations.js';
import { parseServedQueues } from './served-queues.js';

describe('assertEveryJobHandled', () => {
  it('accepts the worker as built: every job has exactly one handler', () => {
    expect(() => assertEveryJobHandled(PROCESSOR_DECLARATIONS)).not.toThrow();
  });

  it('refuses to boot when a job has no handler', () => {
    const withoutDecay = PROCESSOR_DECLARATIONS.filter((processor) => processor.queue !== QueueName.Decay);
    expect(() => assertEveryJobHandled(withoutDecay)).toThrow(/no handler for job decay-sweep/);
  });

  it('refuses two handlers for one job, or a handler on the wrong queue', () => {
    const twice: ProcessorDeclaration = { name: 'Again', queue: QueueName.Categorize, handles: [JobName.CategorizeEntry] };
    expect(() => assertEveryJobHandled([...PROCESSOR_DECLARATIONS, twice])).toThrow(/has 2 handlers/);
    const astray: ProcessorDeclaration = { name: 'Astray', queue: QueueName.Extract, handles: [JobName.DecaySweep] };
    expect(() => assertEveryJobHandled([...PROCESSOR_DECLARATIONS, astray])).toThrow(/runs on engram-decay/);
  });
});

describe('parseServedQueues', () => {
  it('serves every queue for * or nothing', () => {
    expect(parseServedQueues('*')).toEqual(Object.values(QueueName));
    expect(parseServedQueues('')).toEqual(Object.values(QueueName));
  });

  it('serves the listed queues', () => {
    expect(parseServedQueues(' engram-decay, engram-categorize')).toEqual([QueueName.Categorize, QueueName.Decay]);
  });

  it('refuses an unknown queue name', () => {
    expect(() => parseServedQueues('engram-decay,decay')).toThrow(/unknown queues: decay/);
  });
});
