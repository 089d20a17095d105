import { JobName, queueOfJob, type QueueName } from '@engram/jobs';

/** What a processor class declares about itself: its queue and the job names its switch handles. */
export interface ProcessorDeclaration {
  readonly name: string;
  readonly queue: QueueName;
  readonly handles: readonly JobName[];
}

/**
 * The boot check: every job name has exactly one handler, on the queue the registry puts it on.
 * Throws naming each problem; the worker does not start with a job it would leave unprocessed.
 */
export function assertEveryJobHandled(processors: readonly ProcessorDeclaration[]): void {
  const problems: string[] = [];
  const owners = new Map<JobName, string[]>();
  for (const processor of processors) {
    for (const job of processor.handles) {
      if (queueOfJob[job] !== processor.queue) {
        problems.push(`${processor.name} handles ${job} on ${processor.queue}, but ${job} runs on ${queueOfJob[job]}`);
      }
      owners.set(job, [...(owners.get(job) ?? []), processor.name]);
    }
  }
  for (const job of Object.values(JobName)) {
    const handlers = owners.get(job) ?? [];
    if (handlers.length === 0) problems.push(`no handler for job ${job}`);
    if (handlers.length > 1) problems.push(`job ${job} has ${handlers.length} handlers: ${handlers.join(', ')}`);
  }
  if (problems.length > 0) throw new Error(`job registry incomplete: ${problems.join('; ')}`);
}
