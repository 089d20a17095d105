import { JobName, QueueName, type JobNameOfQueue } from '@engram/jobs';
import type { ProcessorDeclaration } from '../handler-coverage.js';

function declare<Q extends QueueName>(name: string, queue: Q, handles: readonly JobNameOfQueue<Q>[]): ProcessorDeclaration & { readonly queue: Q } {
  return { name, queue, handles };
}

/** One processor per queue and the jobs its switch handles; checked at boot by assertEveryJobHandled. */
export const CATEGORIZE = declare('CategorizeProcessor', QueueName.Categorize, [JobName.CategorizeEntry]);
export const CONSOLIDATE = declare('ConsolidateProcessor', QueueName.Consolidate, [JobName.ConsolidatePool]);
export const DECAY = declare('DecayProcessor', QueueName.Decay, [JobName.DecaySweep]);
export const EXTRACT = declare('ExtractProcessor', QueueName.Extract, [JobName.ExtractExchange]);

export const EMBED = declare('EmbedProcessor', QueueName.Embed, [JobName.EmbedPool]);

export const PROCESSOR_DECLARATIONS: readonly ProcessorDeclaration[] = [CATEGORIZE, CONSOLIDATE, DECAY, EXTRACT, EMBED];
