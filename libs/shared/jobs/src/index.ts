export * from './queue-name.js';
export * from './job-item.js';
export * from './job-options.js';
export * from './derive-jobs.js';
export { jobDataHolds } from './job-text.js';
export { exchangeIdOf } from './exchange-id.js';
export { queuedJobData, openedExtractionData, isSealedJobData, SealedJobError, type JobDataSealer, type SealedExtractExchangeData } from './sealed-job-data.js';
