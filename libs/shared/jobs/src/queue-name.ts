/** Queues and job names: the one place they are spelled. */
export const QueueName = {
  Categorize: 'engram-categorize',
  Consolidate: 'engram-consolidate',
  Decay: 'engram-decay',
  Extract: 'engram-extract',
  Embed: 'engram-embed',
} as const;
export type QueueName = (typeof QueueName)[keyof typeof QueueName];

export const JobName = {
  CategorizeEntry: 'categorize-entry',
  ConsolidatePool: 'consolidate-pool',
  DecaySweep: 'decay-sweep',
  ExtractExchange: 'extract-exchange',
  EmbedPool: 'embed-pool',
} as const;
export type JobName = (typeof JobName)[keyof typeof JobName];
