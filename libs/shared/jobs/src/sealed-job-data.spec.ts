import { describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import { JobName } from './queue-name.js';
import { jobDataHolds } from './job-text.js';
import { openedExtractionData, queuedJobData, SealedJobError, type SealedExtractExchangeData } from './sealed-job-data.js';
import type { ExtractExchangeData, JobItem } from './job-item.js';

const TOKEN = 'quillwort9marmalade';
const data: ExtractExchangeData = {
  pool: 'home',
  requestId: 'req-1',
  exchangeId: 'ex-1',
  suggestions: [`the shed padlock reads ${TOKEN}`],
  exchange: { user: `remember ${TOKEN} please`, assistant: 'Noted.' },
};
const item: JobItem = { name: JobName.ExtractExchange, data };
const key = EncryptionKey.parse(EncryptionKey.generate());

describe('extraction jobs as Redis keeps them', () => {
  it('with a key: the ids clear, the texts sealed, and opened back whole', () => {
    const queued = queuedJobData(item, key) as SealedExtractExchangeData;
    expect(queued).toEqual({ pool: 'home', requestId: 'req-1', exchangeId: 'ex-1', sealed: expect.any(String) });
    expect(Buffer.from(queued.sealed, 'base64').includes(TOKEN)).toBe(false);
    expect(jobDataHolds(queued, TOKEN)).toBe(false);
    const opened = openedExtractionData(queued, key);
    expect(opened).toEqual(data);
    expect(jobDataHolds(opened, TOKEN)).toBe(true);
  });

  it('without a key, and for jobs that carry only ids, the data as it is', () => {
    expect(queuedJobData(item, null)).toBe(data);
    expect(openedExtractionData(data, key)).toBe(data);
    const categorize: JobItem = { name: JobName.CategorizeEntry, data: { pool: 'home', memoryId: 'm1', eventId: 'e1' } };
    expect(queuedJobData(categorize, key)).toBe(categorize.data);
  });

  it('refuses, saying why, to open with no key, another key, or under another job', () => {
    const queued = queuedJobData(item, key) as SealedExtractExchangeData;
    expect(() => openedExtractionData(queued, null)).toThrow(new SealedJobError('this extraction job is sealed and no ENGRAM_ENCRYPTION_KEY is configured here'));
    expect(() => openedExtractionData(queued, EncryptionKey.parse(EncryptionKey.generate()))).toThrow(SealedJobError);
    for (const moved of [{ pool: 'work' }, { exchangeId: 'ex-2' }, { requestId: 'req-2' }]) {
      expect(() => openedExtractionData({ ...queued, ...moved }, key)).toThrow(SealedJobError);
    }
  });
});
