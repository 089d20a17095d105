export * from './pool.js';
export * from './memory-entry.js';
export * from './events.js';
