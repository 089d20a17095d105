/**
 * A child process for the crash test: opens the memory service on a data dir and keeps `concurrency`
 * stores in flight until killed, printing `ack <id> <content>` for each acknowledged write.
 * (stdout to a pipe is synchronous on Linux, so a printed ack reached the parent before the next write.)
 * Usage: node write-load.js <dataDir> <concurrency>
 */
import { pino } from 'pino';
import { openMemoryService } from '../data-dir/open-memory-service.js';

const [dataDir, concurrencyArg] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: write-load.js <dataDir> <concurrency>');
const concurrency = Number(concurrencyArg ?? '64');
const service = await openMemoryService({ dataDir, tier1MaxChars: 400, logger: pino({ level: 'silent' }) });
process.stdout.write('ready\n');

let next = 0;
async function writer(): Promise<void> {
  for (;;) {
    const content = `crash test write ${next++}`;
    const entry = await service.store({ pool: 'crash', actor: 'user', content, category: 'project' });
    process.stdout.write(`ack ${entry.id} ${content}\n`);
  }
}
await Promise.all(Array.from({ length: concurrency }, () => writer()));
