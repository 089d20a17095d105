export * from './pool.js';
export * from './memory-entry.js';
export * from './events.js';
export * from './categorizer.js';
export * from './similarity.js';
export * from './decay.js';
export * from './evolve.js';
export * from './tier1.js';
