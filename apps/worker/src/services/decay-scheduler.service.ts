import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { EngramConfig } from '@engram/config';
import { decaySchedule, QueueName } from '@engram/jobs';
import type { Logger } from '@engram/observability';
import type { Queue } from 'bullmq';
import { CONFIG, LOGGER, QUEUES } from '../worker.tokens.js';

/**
 * Registers the periodic decay sweep as a BullMQ job scheduler. Upsert is idempotent: every worker
 * serving the decay queue may call it; there is still one schedule, and a changed DECAY_EVERY_MS
 * replaces it.
 */
@Injectable()
export class DecaySchedulerService implements OnApplicationBootstrap {
  constructor(
    @Inject(QUEUES) private readonly queues: ReadonlyMap<QueueName, Queue>,
    @Inject(CONFIG) private readonly config: EngramConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const queue = this.queues.get(QueueName.Decay);
    if (!queue) return;
    const schedule = decaySchedule(this.config.worker.decayEveryMs);
    await queue.upsertJobScheduler(schedule.id, schedule.repeat, schedule.template);
    this.logger.info({ everyMs: schedule.repeat.every }, 'decay sweep scheduled');
  }
}
