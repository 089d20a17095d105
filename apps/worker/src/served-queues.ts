import { QueueName } from '@engram/jobs';

const ALL_QUEUES = Object.values(QueueName) as QueueName[];

/**
 * `WORKER_QUEUES`: `*` (every queue) or a comma list of queue names, so one deployment can run
 * the cheap queues and another the model-calling one. An unknown name is a boot error, not a no-op.
 */
export function parseServedQueues(spec: string): QueueName[] {
  const names = spec
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
  if (names.length === 0 || names.includes('*')) return ALL_QUEUES;
  const unknown = names.filter((name) => !(ALL_QUEUES as string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(`WORKER_QUEUES names unknown queues: ${unknown.join(', ')} (known: ${ALL_QUEUES.join(', ')}, or *)`);
  }
  return ALL_QUEUES.filter((queue) => names.includes(queue));
}
