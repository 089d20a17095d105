import type { Type } from '@nestjs/common';
import type { WorkerHost } from '@nestjs/bullmq';
import type { QueueName } from '@engram/jobs';
import { CategorizeProcessor } from './categorize.processor.js';
import { ConsolidateProcessor } from './consolidate.processor.js';
import { DecayProcessor } from './decay.processor.js';
import { EmbedProcessor } from './embed.processor.js';
import { ExtractProcessor } from './extract.processor.js';

/** The processor class of each queue (a Record: one per queue, none missing). */
export const PROCESSORS: Readonly<Record<QueueName, Type<WorkerHost>>> = {
  'engram-categorize': CategorizeProcessor,
  'engram-consolidate': ConsolidateProcessor,
  'engram-decay': DecayProcessor,
  'engram-extract': ExtractProcessor,
  'engram-embed': EmbedProcessor,
};

/** Each queue's class is the one its declaration names (the declarations are what the boot check reads). */
export function assertProcessorsMatchDeclarations(declarations: readonly { name: string; queue: QueueName }[]): void {
  for (const declaration of declarations) {
    const actual = PROCESSORS[declaration.queue].name;
    if (actual !== declaration.name) {
      throw new Error(`queue ${declaration.queue} is served by ${actual}, but its declaration names ${declaration.name}`);
    }
  }
}
